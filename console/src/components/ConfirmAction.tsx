import { useState, type ReactNode } from "react";
import { Button, Dialog, DialogTrigger, Heading, Modal } from "react-aria-components";
import { ApiError } from "./ApiError";

/**
 * An action that cannot be undone (deleting, replacing a secret) behind a dialog that says
 * what it does. The dialog stays open with the API's refusal when the action fails.
 */
export function ConfirmAction(props: { trigger: string; title: string; confirm: string; children: ReactNode; onConfirm(): Promise<unknown> }) {
  const { trigger, title, confirm, children, onConfirm } = props;
  const [open, setOpen] = useState(false);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async () => {
    setPending(true);
    setError(undefined);
    try {
      await onConfirm();
      setOpen(false);
    } catch (failure) {
      setError(failure);
    } finally {
      setPending(false);
    }
  };
  return (
    <DialogTrigger isOpen={open} onOpenChange={setOpen}>
      <Button className="warn">{trigger}</Button>
      <Modal>
        <Dialog role="alertdialog">
          <Heading slot="title">{title}</Heading>
          {children}
          <ApiError error={error} />
          <div className="actions">
            <Button className="primary warn" onPress={() => void run()} isDisabled={pending}>
              {confirm}
            </Button>
            <Button slot="close">Cancel</Button>
          </div>
        </Dialog>
      </Modal>
    </DialogTrigger>
  );
}
