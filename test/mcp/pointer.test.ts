/**
 * RFC 6901 pointers as the gateway uses them (src/mcp/pointer.ts): every read is made twice, so a
 * parse never depends on an earlier one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { getPointer, isPointer, pointerTokens, removePointer, setPointer } from '../../src/mcp/pointer.js';

const doc = { a: { 'b/c': 1, 'd~e': [10, 20], f: { g: 'x' } }, h: null };

test('pointers parse escapes, the same on the second call', () => {
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(pointerTokens('/a/b~1c/d~0e'), ['a', 'b/c', 'd~e']);
    assert.deepEqual(pointerTokens(''), []);
    assert.equal(pointerTokens('a/b'), undefined);
    assert.equal(pointerTokens('/a~2'), undefined);
    assert.equal(pointerTokens('/a~'), undefined);
    assert.equal(isPointer('/x'), true);
    assert.equal(isPointer('x'), false);
  }
});

test('a pointer parse is handed out frozen: no caller can change it', () => {
  const tokens = pointerTokens('/frozen/one') as string[];
  assert.throws(() => tokens.push('two'), TypeError);
  assert.deepEqual(pointerTokens('/frozen/one'), ['frozen', 'one']);
});

test('pointers read members, array items and absent paths', () => {
  for (let i = 0; i < 2; i++) {
    assert.equal(getPointer(doc, '/a/b~1c'), 1);
    assert.equal(getPointer(doc, '/a/d~0e/1'), 20);
    assert.equal(getPointer(doc, '/a/d~0e/01'), undefined);
    assert.equal(getPointer(doc, '/a/missing/deeper'), undefined);
    assert.equal(getPointer(doc, '/h'), null);
    assert.equal(getPointer(doc, ''), doc);
  }
});

test('setPointer sets at depth on a copy, and refuses a path without object parents', () => {
  const before = JSON.stringify(doc);
  const set = setPointer(doc, '/a/f/g', 'y') ?? {};
  assert.equal(getPointer(set, '/a/f/g'), 'y');
  assert.equal(getPointer(set, '/a/b~1c'), 1);
  const added = setPointer(doc, '/a/new~1key', 2) ?? {};
  assert.equal(getPointer(added, '/a/new~1key'), 2);
  assert.equal(getPointer(added, '/a/b~1c'), 1);
  assert.equal(setPointer(doc, '/h/x', 1), undefined);
  assert.equal(setPointer(doc, '/a/d~0e/0', 1), undefined);
  assert.equal(setPointer(doc, '', 1), undefined);
  assert.equal(JSON.stringify(doc), before);
});

test('removePointer removes at depth on a copy; an absent path leaves the document as it is', () => {
  const removed = removePointer(doc, '/a/f/g');
  assert.deepEqual(getPointer(removed, '/a/f'), {});
  assert.equal(getPointer(removed, '/a/b~1c'), 1);
  assert.equal(getPointer(doc, '/a/f/g'), 'x');
  assert.deepEqual(removePointer(doc, '/h/x'), doc);
  assert.equal(getPointer(removePointer(doc, '/a/b~1c'), '/a/b~1c'), undefined);
});
