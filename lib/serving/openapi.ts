/**
 * @module serving/openapi
 * `--enable-swagger-ui`: an OpenAPI 2.0 document of the paths this process serves
 * (`/openapi/v2`) and `/swagger-ui`, an HTML page rendered from that same document on the server
 * (eta, auto-escaped), so it needs no external script, style or font.
 */
import { Eta } from "eta";

export interface PathDoc {
  readonly path: string;
  readonly summary: string;
  readonly produces: string;
  readonly parameters?: readonly { name: string; description: string; type: "string" | "integer" | "boolean" }[];
}

export function openApiDocument(title: string, version: string, paths: readonly PathDoc[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of paths) {
    out[p.path] = {
      get: {
        summary: p.summary,
        produces: [p.produces],
        parameters: (p.parameters ?? []).map((q) => ({ in: "query", required: false, ...q })),
        responses: {
          "200": { description: "OK" },
          "401": { description: "Unauthorized: credentials were presented and rejected" },
          "403": { description: "Forbidden by SubjectAccessReview" },
        },
      },
    };
  }
  return {
    swagger: "2.0",
    info: { title, version },
    schemes: ["https"],
    securityDefinitions: {
      BearerToken: { type: "apiKey", in: "header", name: "Authorization" },
    },
    security: [{ BearerToken: [] }],
    paths: out,
  };
}

const eta = new Eta({ autoEscape: true, autoTrim: false });
const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title><%= it.info.title %> API</title>
<style>
body{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem;color:#222}
h1{font-size:1.4rem}.op{border:1px solid #ccc;border-radius:4px;margin:.6rem 0;padding:.5rem .8rem}
.verb{display:inline-block;background:#2b7;color:#fff;border-radius:3px;padding:0 .4rem;font-weight:bold;margin-right:.5rem}
code{font-size:1rem}table{border-collapse:collapse;margin-top:.4rem}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left}
.muted{color:#666}
</style></head><body>
<h1><%= it.info.title %> <span class="muted">version <%= it.info.version %></span></h1>
<p>Paths served on this port (OpenAPI document: <a href="/openapi/v2">/openapi/v2</a>). Requests are authenticated
(client certificate, front-proxy headers, bearer token, or anonymous) and authorized by SubjectAccessReview.</p>
<% for (const [path, item] of Object.entries(it.paths)) { %>
<div class="op"><span class="verb">GET</span><code><%= path %></code> &mdash; <%= item.get.summary %>
<div class="muted">produces <%= item.get.produces.join(", ") %></div>
<% if (item.get.parameters.length > 0) { %><table><tr><th>query parameter</th><th>type</th><th>meaning</th></tr>
<% for (const p of item.get.parameters) { %><tr><td><code><%= p.name %></code></td><td><%= p.type %></td><td><%= p.description %></td></tr><% } %>
</table><% } %>
</div>
<% } %>
</body></html>
`;

export function swaggerPage(doc: Record<string, unknown>): string {
  return eta.renderString(page, doc);
}
