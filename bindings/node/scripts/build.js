#!/usr/bin/env node
// scripts/build.js -- build the native addon with node-gyp (npm runs it at
// install).  The Node.js headers come from the installed Node (Debian's
// nodejs puts them in /usr/include/node), so the build needs no download
// from nodejs.org; npm_config_nodedir or --nodedir=DIR chooses others.
// libsqlq is found through SQLQ_INCLUDE_DIR and SQLQ_LIB_DIR (see
// binding.gyp), else in the system's directories.
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

function nodedir() {
  const given = process.argv.find((a) => a.startsWith("--nodedir="));
  if (given) return given.slice("--nodedir=".length);
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  // The prefix of the running node: /usr for /usr/bin/node.
  const prefix = path.dirname(path.dirname(process.execPath));
  if (fs.existsSync(path.join(prefix, "include", "node", "node_api.h"))) return prefix;
  return null;
}

const dir = nodedir();
const gyp = require.resolve("node-gyp/bin/node-gyp.js");
const args = [gyp, "rebuild", "--release"];
if (dir) args.push(`--nodedir=${dir}`);
const r = spawnSync(process.execPath, args, { cwd: path.join(__dirname, ".."), stdio: "inherit" });
process.exit(r.status === null ? 1 : r.status);
