import { shortId } from "../../lib/format";
import type { SpecificationSummary } from "../../ipc";
import { Empty } from "../../components/States";

/**
 * Device specifications with their modules and packages, one line each (the id in the name's
 * tooltip); a click narrows the other tabs to one.
 */
export function SpecsTable({ specs, onPick }: { specs: SpecificationSummary[]; onPick: (id: string) => void }) {
  if (specs.length === 0) return <Empty title="No device specifications">This environment has no firmware modules.</Empty>;
  return (
    <div class="table-wrap">
      <table class="table table-compact" data-testid="specs-table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col" style={{ width: "130px" }}>
              Owner
            </th>
            <th scope="col" style={{ width: "90px" }}>
              Modules
            </th>
            <th scope="col" style={{ width: "90px" }}>
              Packages
            </th>
            <th scope="col" style={{ width: "150px" }}>
              <span class="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {specs.map((s) => (
            <tr key={s.id} data-testid="spec-row" data-id={s.id}>
              <td title={`${s.name ?? "Name not known yet: no package embeds it"}\nSpecification id ${s.id}`}>
                {s.name ?? (
                  <>
                    <code>{shortId(s.id)}</code> <span class="muted">name not known yet</span>
                  </>
                )}
              </td>
              <td title={s.clientId ? `Owner (client id) ${s.clientId}` : undefined}>{s.clientId ? <code>{shortId(s.clientId)}</code> : ""}</td>
              <td>{s.modules}</td>
              <td>{s.packages}</td>
              <td class="actions-cell">
                <div class="row-actions">
                  <button type="button" class="button button-small" onClick={() => onPick(s.id)}>
                    Show its modules
                  </button>
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
