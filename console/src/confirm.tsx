/**
 * A confirmation step (docs/console.md "Keyboard"): the button that asks, then a small non-modal
 * dialog with Confirm and Cancel. Focus follows the step, so a keyboard or screen-reader user is
 * never left on <body>: opening moves focus to Confirm; Cancel or Escape closes the dialog and
 * gives focus back to the button that opened it.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

export function ConfirmStep(p: {
  /** The opener's text (its accessible name). */
  label: string;
  openerClass?: string;
  /** The dialog's id prefix (unique on the page): names the question that labels the dialog. */
  id: string;
  question: ComponentChildren;
  confirm: string;
  confirmClass?: string;
  onConfirm: () => void;
}) {
  const [open, setOpen] = useState(false);
  const opener = useRef<HTMLButtonElement>(null);
  const confirmButton = useRef<HTMLButtonElement>(null);
  // Set when the dialog closes, so the opener (mounted again) takes focus back; not on first render.
  const giveBack = useRef(false);
  useEffect(() => {
    if (open) confirmButton.current?.focus();
    else if (giveBack.current) {
      giveBack.current = false;
      opener.current?.focus();
    }
  }, [open]);
  const close = (): void => {
    giveBack.current = true;
    setOpen(false);
  };
  if (!open) {
    return (
      <button ref={opener} type="button" class={p.openerClass} onClick={() => setOpen(true)}>
        {p.label}
      </button>
    );
  }
  return (
    <div
      role="dialog"
      aria-labelledby={`${p.id}-q`}
      class="confirm"
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return;
        e.preventDefault();
        close();
      }}
    >
      <p id={`${p.id}-q`}>{p.question}</p>
      <button
        ref={confirmButton}
        type="button"
        class={p.confirmClass}
        onClick={() => {
          close();
          p.onConfirm();
        }}
      >
        {p.confirm}
      </button>
      <button type="button" onClick={close}>
        Cancel
      </button>
    </div>
  );
}
