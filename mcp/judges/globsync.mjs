// A preload (node --import) for the MCP conformance suite on Node 20: the suite imports
// fs.globSync, which Node adds in 22. It installs one before the suite's ESM import of fs
// binds its names, for the only pattern shape the suite uses ("**/<file name>" under a
// cwd); any other pattern throws, so a change in the suite shows instead of misleading.
const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');
if (typeof fs.globSync !== 'function') {
  fs.globSync = function globSync(pattern, options = {}) {
    const cwd = options.cwd ?? process.cwd();
    const m = /^\*\*\/([^*?[\]{}/]+)$/.exec(pattern);
    if (!m) throw new Error(`globSync shim: unsupported pattern ${pattern}`);
    const out = [];
    const walk = (rel) => {
      for (const e of fs.readdirSync(path.join(cwd, rel), { withFileTypes: true })) {
        const r = rel ? path.join(rel, e.name) : e.name;
        if (e.isDirectory()) walk(r);
        else if (e.name === m[1]) out.push(r);
      }
    };
    walk('');
    return out;
  };
}
