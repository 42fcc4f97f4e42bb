import { shortId } from "../../lib/format";
import type { SpecificationSummary } from "../../ipc";
import { Empty } from "../../components/States";

/** Device specifications with their modules and packages; a click narrows the other tabs to one. */
export function SpecsTable({ specs, onPick }: { specs: SpecificationSummary[]; onPick: (id: string) => void }) {
  if (specs.length === 0) return <Empty title="No device specifications">This environment has no firmware modules.</Empty>;
  return (
    <div class="table-wrap">
      <table class="table" data-testid="specs-table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Id</th>
            <th scope="col">Owner</th>
            <th scope="col">Modules</th>
            <th scope="col">Packages</th>
            <th scope="col">
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {specs.map((s) => (
            <tr key={s.id} data-testid="spec-row">
              <td>{s.name ?? <span class="muted">name not known (no package embeds it yet)</span>}</td>
              <td title={s.id}>
                <code>{s.id}</code>
              </td>
              <td title={s.clientId ?? ""}>{s.clientId ? <code>{shortId(s.clientId)}</code> : ""}</td>
              <td>{s.modules}</td>
              <td>{s.packages}</td>
              <td class="actions-cell">
                <button type="button" class="button button-small" onClick={() => onPick(s.id)}>
                  Show its modules
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
