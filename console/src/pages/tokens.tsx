/** Tokens (admins only): list and revoke; a revoked token's console sessions end with it. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api.js';
import { ErrorNote, Time } from '../format.js';
import { useLoad } from '../load.js';

export function TokensPage() {
  const list = useLoad(async () => ok(await api.GET('/v1/tokens')), []);
  const [confirm, setConfirm] = useState<string>();
  const [error, setError] = useState<unknown>();
  const revoke = async (id: string): Promise<void> => {
    setConfirm(undefined);
    try {
      ok(await api.DELETE('/v1/tokens/{id}', { params: { path: { id } } }));
      list.reload();
    } catch (e) {
      setError(e);
    }
  };
  return (
    <section aria-labelledby="t-h">
      <h1 id="t-h">Tokens</h1>
      <ErrorNote error={list.error ?? error} />
      <div class="scroll" tabIndex={0} role="region" aria-label="Table (scrolls sideways on narrow screens)">
        <table>
          <caption class="sr-only">Principal tokens</caption>
          <thead>
            <tr>
              <th scope="col">Token</th>
              <th scope="col">Role</th>
              <th scope="col">Created</th>
              <th scope="col">Revoked</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {(list.value?.tokens ?? []).map((t) => (
              <tr>
                <td>
                  {t.name} <code>{t.id}</code>
                </td>
                <td>{t.role}</td>
                <td>
                  <Time ms={t.createdAt} />
                </td>
                <td>
                  <Time ms={t.revokedAt} />
                </td>
                <td>
                  {t.revokedAt === null &&
                    (confirm === t.id ? (
                      <>
                        <button type="button" class="danger" onClick={() => void revoke(t.id)}>
                          Confirm revoke
                        </button>
                        <button type="button" onClick={() => setConfirm(undefined)}>
                          Cancel
                        </button>
                      </>
                    ) : (
                      <button type="button" class="admin-action" onClick={() => setConfirm(t.id)}>
                        Revoke {t.name}
                      </button>
                    ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
