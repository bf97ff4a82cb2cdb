import assert from "node:assert/strict";
import { isIdentityHeader, userFromHeaders } from "../../lib/auth/request_header.ts";

const names = {
  usernameHeaders: ["X-Remote-User", "X-Other-User"],
  groupHeaders: ["x-remote-group", "X-Other-Group"],
  extraHeaderPrefixes: ["X-Remote-Extra-"],
};

Deno.test("request_header: first non-empty username header wins, names case-insensitive", () => {
  const u = userFromHeaders([["x-remote-user", " "], ["X-OTHER-USER", "bob"], ["x-remote-user", "later"]], names);
  // x-remote-user is listed first, but its first value is blank: the next header name is used.
  assert.equal(u?.name, "bob");
  const v = userFromHeaders([["X-Other-User", "bob"]], names);
  assert.equal(v?.name, "bob");
  assert.equal(userFromHeaders([["x-remote-group", "g"]], names), null, "no username: no identity");
});

Deno.test("request_header: groups are every value of every group header; extra keys lower-cased and unescaped", () => {
  const u = userFromHeaders([
    ["X-Remote-User", "alice"],
    ["X-Remote-Group", "a"],
    ["x-other-group", "c"],
    ["x-remote-group", "b"],
    ["X-Remote-Extra-Scopes", "read"],
    ["x-remote-extra-scopes", "write"],
    ["X-Remote-Extra-Example.com%2fTeam", "blue"],
    ["X-Remote-Extra-Case%4B", "k"],
  ], names)!;
  assert.deepEqual(u.groups, ["a", "b", "c"]);
  assert.deepEqual(u.extra, { scopes: ["read", "write"], "example.com/team": ["blue"], "caseK": ["k"] });
});

Deno.test("request_header: identity headers are recognised for removal", () => {
  assert.ok(isIdentityHeader("X-Remote-User", names));
  assert.ok(isIdentityHeader("x-other-group", names));
  assert.ok(isIdentityHeader("X-REMOTE-EXTRA-anything", names));
  assert.ok(!isIdentityHeader("x-forwarded-for", names));
});
