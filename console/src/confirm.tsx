/**
 * A confirmation step (docs/console.md "Keyboard"): the button that asks, then a small non-modal
 * dialog with Confirm and Cancel. Focus follows the step, so a keyboard or screen-reader user is
 * never left on <body>: opening moves focus to Confirm; Cancel or Escape closes the dialog and
 * gives focus back to the button that opened it. While the confirmed action is in flight the
 * opener is disabled and says so (`busyLabel`), so the action cannot be confirmed twice.
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
  /** The action; while its promise is pending the step is busy. */
  onConfirm: () => void | Promise<unknown>;
  /** The opener's text while the action is in flight ("Reconciling…"). */
  busyLabel?: string;
}) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
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
      <button
        ref={opener}
        type="button"
        class={p.openerClass}
        // aria-disabled, not disabled: the opener keeps keyboard focus (it takes it back as the
        // dialog closes) while it refuses to ask again.
        aria-disabled={busy}
        aria-busy={busy}
        onClick={() => !busy && setOpen(true)}
      >
        {busy ? (p.busyLabel ?? `${p.label}…`) : p.label}
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
          const pending = p.onConfirm();
          if (pending === undefined) return;
          setBusy(true);
          const done = (): void => {
            if (mounted.current) setBusy(false);
          };
          pending.then(done, done);
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
