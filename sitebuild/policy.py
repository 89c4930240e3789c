"""The pages' Content-Security-Policy: one definition for the <meta> tag and the dev server's header."""

# 'wasm-unsafe-eval' lets Pyodide compile its WebAssembly; nothing else is evaluated.
CSP = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; "
       "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'none'")

#: As an HTTP header the policy can also refuse framing (a <meta> CSP ignores frame-ancestors).
CSP_HEADER = CSP + "; frame-ancestors 'none'"
