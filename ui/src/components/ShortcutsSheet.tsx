import { EVERYWHERE, SHORTCUTS } from "../lib/shortcuts";
import { Modal, ModalCancel } from "./Modal";

/** The keyboard shortcuts (`?`), from the table the key handler uses. */
export function ShortcutsSheet({ onClose }: { onClose: () => void }) {
  const rows = [...SHORTCUTS.map((s) => ({ keys: s.keys, label: s.does.kind === "area" ? `Go to ${s.label}` : s.label })), ...EVERYWHERE];
  return (
    <Modal testid="shortcuts" labelledBy="shortcuts-title" onClose={onClose}>
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <table class="shortcuts">
        <tbody>
          {rows.map((r) => (
            <tr key={r.keys}>
              <th scope="row">
                {r.keys.split(" / ").map((k, i) => (
                  <span key={k}>
                    {i > 0 && " / "}
                    {k.split("+").map((part, j) => (
                      <span key={part}>
                        {j > 0 && "+"}
                        <kbd>{part}</kbd>
                      </span>
                    ))}
                  </span>
                ))}
              </th>
              <td>{r.label}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="dialog-actions">
        <ModalCancel testid="shortcuts-close">Close</ModalCancel>
      </div>
    </Modal>
  );
}
