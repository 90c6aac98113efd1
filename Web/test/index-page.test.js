// The page's index.html names every module app.js loads, directly or not, as a modulepreload:
// the browser then asks for all of them at once instead of learning the graph one level per
// round trip (on a phone's 150 ms link, that was most of a cold load: docs/benchmarks.md).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const web = new URL('../', import.meta.url);

/**
 * Every module `entry` imports, directly or not, as paths below Web/, in the order first met.
 * @param {string} entry a path below Web/ (`js/app.js`)
 * @returns {string[]}
 */
function moduleGraph(entry) {
  /** @type {string[]} */
  const found = [];
  /** @param {string} path */
  const visit = (path) => {
    if (found.includes(path)) return;
    found.push(path);
    const source = readFileSync(new URL(path, web), 'utf8');
    for (const match of source.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'|^\s*import\s+'(\.{1,2}\/[^']+)'/gm)) {
      const specifier = match[1] ?? match[2];
      visit(new URL(specifier, new URL(path, web)).href.slice(web.href.length));
    }
  };
  visit(entry);
  return found;
}

test('index.html preloads exactly the modules app.js loads', () => {
  const html = readFileSync(new URL('index.html', web), 'utf8');
  const preloaded = Array.from(html.matchAll(/<link rel="modulepreload" href="([^"]+)">/g), (match) => match[1]);
  const graph = moduleGraph('js/app.js').filter((path) => path !== 'js/app.js');
  assert.deepEqual([...preloaded].sort(), [...graph].sort(),
    `index.html's modulepreload links should be:\n${graph.sort().map((path) => `  <link rel="modulepreload" href="${path}">`).join('\n')}`);
  assert.match(html, /<script type="module" src="js\/app.js"><\/script>/);
});
