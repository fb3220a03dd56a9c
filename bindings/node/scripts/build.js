#!/usr/bin/env node
// scripts/build.js -- build the native addon with node-gyp (npm runs it at
// install).  The Node.js headers come from the installed Node (Debian's
// nodejs puts them in /usr/include/node), so the build needs no download
// from nodejs.org; npm_config_nodedir or --nodedir=DIR chooses others.
// libsqlq is found through SQLQ_INCLUDE_DIR and SQLQ_LIB_DIR (see
// binding.gyp), else in the system's directories.
//
// --out=DIR builds in DIR instead of the package (a copy of binding.gyp
// and src/ goes there; the addon is DIR/build/Release/sqlq.node), so that
// several builds of libsqlq each get their own addon; lib/index.js loads
// it when SQLQ_NODE_ADDON names it.
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const pkg = path.join(__dirname, "..");
const arg = (name) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3) : null;
};

function nodedir() {
  const given = arg("nodedir") || process.env.npm_config_nodedir;
  if (given) return given;
  // The prefix of the running node: /usr for /usr/bin/node.
  const prefix = path.dirname(path.dirname(process.execPath));
  if (fs.existsSync(path.join(prefix, "include", "node", "node_api.h"))) return prefix;
  return null;
}

let cwd = pkg;
const env = { ...process.env };
const out = arg("out");
if (out) {
  cwd = path.resolve(out);
  fs.mkdirSync(path.join(cwd, "src"), { recursive: true });
  fs.copyFileSync(path.join(pkg, "binding.gyp"), path.join(cwd, "binding.gyp"));
  fs.cpSync(path.join(pkg, "src"), path.join(cwd, "src"), { recursive: true });
  // binding.gyp finds node-addon-api with require() from cwd.
  env.NODE_PATH = path.join(pkg, "node_modules");
}
const dir = nodedir();
const args = [require.resolve("node-gyp/bin/node-gyp.js"), "rebuild", "--release"];
if (dir) args.push(`--nodedir=${dir}`);
const r = spawnSync(process.execPath, args, { cwd, env, stdio: "inherit" });
process.exit(r.status === null ? 1 : r.status);
