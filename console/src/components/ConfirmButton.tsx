import { Button, Dialog, DialogTrigger, Heading, Modal } from "react-aria-components";

/** A button for what cannot be undone: it asks first, in an alert dialog that names what happens. */
export function ConfirmButton(props: { label: string; title: string; children: React.ReactNode; confirm: string; onConfirm(): void; isDisabled?: boolean }) {
  const { label, title, children, confirm, onConfirm, isDisabled } = props;
  return (
    <DialogTrigger>
      <Button className="danger" isDisabled={isDisabled}>
        {label}
      </Button>
      <Modal>
        <Dialog role="alertdialog">
          {({ close }) => (
            <>
              <Heading slot="title">{title}</Heading>
              <p>{children}</p>
              <div className="actions">
                <Button
                  className="danger"
                  onPress={() => {
                    close();
                    onConfirm();
                  }}
                >
                  {confirm}
                </Button>
                <Button slot="close" autoFocus>
                  Cancel
                </Button>
              </div>
            </>
          )}
        </Dialog>
      </Modal>
    </DialogTrigger>
  );
}
