// Where the SvelteKit wrapper finds the configured base path: SvelteKit 3
// hands adapters its options flat, SvelteKit 2 under `kit`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configuredBase } from '../lib/sveltekit.js';

test('SvelteKit 3: config.paths.base', () => {
  assert.equal(configuredBase({ paths: { base: '/app' } }), '/app');
});

test('SvelteKit 2: config.kit.paths.base', () => {
  assert.equal(configuredBase({ kit: { paths: { base: '/docs' } } }), '/docs');
});

test('no base configured, or no config: none', () => {
  assert.equal(configuredBase({ paths: { base: '' } }), '');
  assert.equal(configuredBase({}), undefined);
  assert.equal(configuredBase(undefined), undefined);
});
