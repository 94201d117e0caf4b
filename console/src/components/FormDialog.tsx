import type { FormEventHandler, ReactNode } from "react";
import { Button, Dialog, DialogTrigger, Heading, Modal } from "react-aria-components";
import { FormFooter } from "./FormFooter";

/**
 * A button that opens a form in a modal dialog: its fields, the API's refusal under them,
 * and the submit and cancel buttons. The caller owns the form and closes the dialog (`open`)
 * once the API said yes.
 */
export function FormDialog(props: {
  label: string;
  title?: string;
  primary?: boolean;
  open: boolean;
  onOpenChange(open: boolean): void;
  onSubmit: FormEventHandler<HTMLFormElement>;
  submit: string;
  pending: boolean;
  error: unknown;
  children: ReactNode;
}) {
  const { label, title = label, primary, open, onOpenChange, onSubmit, submit, pending, error, children } = props;
  return (
    <DialogTrigger isOpen={open} onOpenChange={onOpenChange}>
      <Button className={primary ? "primary" : undefined}>{label}</Button>
      <Modal>
        <Dialog>
          <Heading slot="title">{title}</Heading>
          <form onSubmit={onSubmit}>
            {children}
            <FormFooter submit={submit} pending={pending} error={error} cancel />
          </form>
        </Dialog>
      </Modal>
    </DialogTrigger>
  );
}
