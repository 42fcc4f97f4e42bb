import { errorMessage, IpcError, type TokenCheck } from "../../ipc";
import { formatLifetime } from "../../lib/forms";

/** What a connection test found: the token's type, lifetime and scopes, or the refusal in words. */
export function TokenResult({ result, error }: { result?: TokenCheck; error?: unknown }) {
  if (result) {
    return (
      <div class="result result-ok" role="status" data-testid="test-result">
        <strong>Connected.</strong> The identity platform issued a {result.tokenType} token valid for{" "}
        {formatLifetime(result.expiresIn)}
        {result.subject && (
          <>
            {" "}
            for tenant <code>{result.subject}</code>
          </>
        )}
        .
        {result.scopes && (
          <div class="scopes">
            Scopes: {result.scopes.length === 0 ? "none" : result.scopes.map((s) => <code key={s}>{s}</code>)}
          </div>
        )}
      </div>
    );
  }
  const code = error instanceof IpcError ? error.code : null;
  const headline =
    code === "wrong_credentials"
      ? "The client id or secret is wrong."
      : code === "service_not_granted"
        ? "This API key has not been given the service."
        : code === "network"
          ? "The identity platform could not be reached."
          : "The connection test failed.";
  return (
    <div class="result result-error" role="alert" data-testid="test-result">
      <strong>{headline}</strong> {errorMessage(error)}
    </div>
  );
}
