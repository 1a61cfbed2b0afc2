/** Tokens (admins only): list and revoke; a revoked token's console sessions end with it. */
import { useState } from 'preact/hooks';
import { api, ok } from '../api.js';
import { ConfirmStep } from '../confirm.js';
import { ErrorNote, Loading, Time } from '../format.js';
import { useLoad } from '../load.js';

export function TokensPage() {
  const list = useLoad(async () => ok(await api.GET('/v1/tokens')), []);
  const [error, setError] = useState<unknown>();
  const revoke = async (id: string): Promise<void> => {
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
      {list.loading && <Loading />}
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
                  {t.revokedAt === null && (
                    <ConfirmStep
                      label={`Revoke ${t.name}`}
                      openerClass="admin-action"
                      id={`revoke-${t.id}`}
                      question={`Revoke ${t.name}? Its console sessions end with it.`}
                      confirm="Confirm revoke"
                      confirmClass="danger"
                      busyLabel="Revoking…"
                      onConfirm={() => revoke(t.id)}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
