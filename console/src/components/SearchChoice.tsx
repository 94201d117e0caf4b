import { useState } from "react";
import { useController, type Control, type FieldValues, type Path } from "react-hook-form";
import { ApiError } from "./ApiError";
import { RadioInput, type Option } from "./ChoiceInputs";
import { SearchBox } from "./SearchBox";

// Adding a membership or a grant means choosing one of thousands (users, projects): searched on the server, chosen among the first matches.

/**
 * The state of a dialog that adds something chosen by search: open or not, the search text,
 * and whether the person tried to submit (what is missing is said only then, and only while
 * still missing).
 */
export function useSearchDialog() {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState("");
  const [tried, setTried] = useState(false);
  return {
    open,
    text,
    setText,
    tried,
    setTried,
    onOpenChange(next: boolean) {
      setOpen(next);
      setTried(false);
    },
    /** Closed after success, ready for the next addition. */
    done() {
      setOpen(false);
      setText("");
      setTried(false);
    },
  };
}

/**
 * A search box and the matches as radio buttons of a form field. Typing clears the choice:
 * one among earlier matches is no longer shown and must not be used unseen.
 */
export function SearchChoice<T extends FieldValues>(props: {
  control: Control<T>;
  name: Path<T>;
  search: string;
  label: string;
  text: string;
  onText(text: string): void;
  matches: Option[];
  answered: boolean;
  none: string;
  error: unknown;
  onChoose?(value: string): void;
}) {
  const { control, name, search, label, text, onText, matches, answered, none, error, onChoose } = props;
  const { field } = useController({ control, name });
  const asked = text.trim() !== "";
  return (
    <>
      <SearchBox
        label={search}
        value={text}
        onChange={(next) => {
          onText(next);
          field.onChange("");
        }}
      />
      {asked && matches.length > 0 && <RadioInput control={control} name={name} label={label} options={matches} onChoose={onChoose} />}
      {asked && answered && matches.length === 0 && <p role="status">{none}</p>}
      <ApiError error={error} />
    </>
  );
}
