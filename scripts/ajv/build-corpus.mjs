#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
//
// Builds Kindgi's extra Ajv corpus (cases the shared vectors do not cover) and asks Ajv for the
// answers:
//
//   node scripts/ajv/build-corpus.mjs            writes crates/kindgi-schema/tests/vectors/extra-{corpus,oracle}.json
//   node scripts/ajv/build-corpus.mjs --check    exit 1 when the committed files differ from a fresh run
//
// Each case is {id, config: "pack"|"mcp", side: "input"|"output", schema, instance}; the oracle
// format is the shared one (see oracle.mjs / ajv-env.mjs).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { answer, repoRoot } from './ajv-env.mjs';

const cases = [];
/** Adds one schema tried against several instances: ids `<config>.<topic>.<n>`. */
function add(id, config, side, schema, instances) {
  instances.forEach((instance, i) => cases.push({ id: `${config}.${side === "input" ? "in." : ""}${id}.${i + 1}`, config, side, schema, instance }));
}
const pack = (id, schema, ...instances) => add(id, 'pack', 'output', schema, instances);
const packIn = (id, schema, ...instances) => add(id, 'pack', 'input', schema, instances);
const mcp = (id, schema, ...instances) => add(id, 'mcp', 'output', schema, instances);
const mcpIn = (id, schema, ...instances) => add(id, 'mcp', 'input', schema, instances);
const D7 = 'http://json-schema.org/draft-07/schema#';
const D6 = 'http://json-schema.org/draft-06/schema#';
const D19 = 'https://json-schema.org/draft/2019-09/schema';
const D20 = 'https://json-schema.org/draft/2020-12/schema';

// ---- formats: several values each, valid and not --------------------------------------------
const formatValues = {
  date: ['2024-02-29', '2023-02-29', '2024-04-31', '2024-12-31', '0000-01-01', '2024-1-1', '2024-01-01T00:00:00Z', ''],
  time: ['12:00:00Z', '12:00:00+01:00', '12:00:00.123456-05:30', '23:59:60Z', '22:59:60-01:00', '12:00', '12:00:00', '25:00:00Z', '12:60:00Z', '12:00:00+24:00', '12:00:00+0130'],
  'date-time': ['2024-01-01T12:00:00Z', '2024-01-01T12:00:00.5+02:00', '2024-01-01 12:00:00z', '2024-01-01T12:00:00', '2024-13-01T00:00:00Z', '2024-01-01TT12:00:00Z', '2024-01-01\t12:00:00Z', '1998-12-31T23:59:60Z', '2024-01-01T23:59:60Z'],
  'iso-time': ['12:00:00', '12:00:00Z', '12:00', '25:00:00'],
  'iso-date-time': ['2024-01-01T12:00:00', '2024-01-01T12:00:00Z', '2024-01-01', '2024-01-01 12:00:00'],
  duration: ['P1D', 'PT1H30M', 'P1W', 'P1Y2M3DT4H5M6S', 'P', 'PT', 'P1W2D', 'P1.5D', 'PT36H', 'p1d'],
  uri: ['https://example.com/a?b=c#d', 'mailto:a@b.co', 'urn:x', 'http://[::1]/', 'http://ex ample.com', 'ab', 'http://example.com/%zz', 'HTTP://EXAMPLE.COM', 'x:/y', 'file:///etc/passwd', 'http://a/b/../c'],
  'uri-reference': ['', '#frag', '../a/b', '//host/path', 'a b', '\\bad', 'http://x.com/é', '?q=1'],
  'uri-template': ['http://example.com/{id}', 'http://example.com/{id', '/a/{+path}/b{?x,y}', '{a:3}', '{a:0}', 'plain'],
  url: ['http://example.com', 'https://example.com:8080/path?q=1', 'ftp://files.example.com', 'http://localhost', 'http://192.168.0.1', 'http://10.0.0.1', 'http://8.8.8.8', 'example.com', 'http://ex.c', 'http://xn--bcher-kva.ch'],
  email: ['a@b.co', 'a.b@c.d.e', 'a..b@c.de', '.a@b.co', 'a@b', 'a@-b.co', 'a@b-.co', 'user+tag@sub.example.org', 'üser@example.com', 'a@b.c0', "o'brien@x.io"],
  hostname: ['example.com', 'a', 'a.b.c', 'a-b.c', '-a.b', 'a_b.c', 'xn--bcher-kva.ch', 'example.com.', '1.2.3.4', 'a'.repeat(63) + '.com', 'a'.repeat(64), ('a'.repeat(63) + '.').repeat(4) + 'a', ''],
  ipv4: ['0.0.0.0', '255.255.255.255', '1.2.3', '1.2.3.4.5', '001.2.3.4', '1.2.3.04', ' 1.2.3.4', '1.2.3.4\n'],
  ipv6: ['::', '::1', '1:2:3:4:5:6:7:8', '1::8', '1:2:3:4:5:6:7:8:9', 'fe80::1%eth0', '::ffff:1.2.3.4', '1:2:3:4:5:6:1.2.3.4', '::ffff:256.1.1.1', 'G::1', '1:::2'],
  regex: ['^a+$', '[', '(?<n>x)\\k<n>', '\\p{L}', 'a\\Z', '\\-', '(?i)x', 'a{2,1}', ''],
  uuid: ['123e4567-e89b-12d3-a456-426614174000', '123E4567-E89B-12D3-A456-426614174000', 'urn:uuid:123e4567-e89b-12d3-a456-426614174000', 'URN:UUID:123e4567-e89b-12d3-a456-426614174000', '123e4567-e89b-12d3-a456-42661417400', '{123e4567-e89b-12d3-a456-426614174000}'],
  'json-pointer': ['', '/', '/a/b', '/a~0b~1c', '/a~', '/a~2', 'a', '#/a'],
  'json-pointer-uri-fragment': ['#', '#/a', '#/a%20b', '#/a b', '/a', '#/%zz'],
  'relative-json-pointer': ['0', '1/a', '0#', '01', '-1', '1#/a', ''],
  byte: ['', 'QUJD', 'QUI=', 'QQ==', 'QUJ', 'Q===', '!!!!', 'QUJD\nQUJD', 'QUJD\n!!!'],
  password: ['anything', ''],
  binary: ['\u0000\u0001'],
};
for (const [fmt, values] of Object.entries(formatValues)) {
  pack(`format.${fmt}`, { type: 'string', format: fmt }, ...values);
}
pack('format.int32', { type: 'number', format: 'int32' }, 0, 2147483647, 2147483648, -2147483648, -2147483649, 1.5, 1e10);
pack('format.int64', { type: 'number', format: 'int64' }, 0, 1.5, 9007199254740992, 1e21);
pack('format.float', { type: 'number', format: 'float' }, 1.5, 1e308);
pack('format.double', { type: 'number', format: 'double' }, -0.5);
pack('format.int32-on-string', { type: ['string', 'number'], format: 'int32' }, 'x', 3.5, 3);
pack('format.email-on-number', { type: ['string', 'number'], format: 'email' }, 5, 'x');
pack('format.number-only-type', { type: 'number', format: 'date' }, 5);
pack('format.limits-time', { type: 'string', format: 'time', formatMinimum: '10:00:00Z', formatMaximum: '12:00:00+01:00' }, '09:59:59Z', '10:00:00Z', '11:00:00Z', '11:00:01Z', 'bad', '10:00:00');
pack('format.limits-datetime', { type: 'string', format: 'date-time', formatExclusiveMinimum: '2020-01-01T00:00:00Z' }, '2020-01-01T00:00:00Z', '2020-01-01T01:00:00+01:00', '2020-01-01T00:00:01Z', 'nope');
pack('format.limits-date-max', { type: 'string', format: 'date', formatMaximum: '2020-12-31', formatExclusiveMinimum: '2020-01-01' }, '2020-06-01', '2021-01-01', '2020-01-01', '2019-01-01');
pack('format.limits-iso', { type: 'string', format: 'iso-time', formatMinimum: '10:00:00' }, '09:00:00', '10:00:00Z', '11:00:00');
pack('format.limits-isodt', { type: 'string', format: 'iso-date-time', formatMaximum: '2020-01-01T10:00:00' }, '2020-01-01T09:00:00', '2020-01-01T11:00:00', '2019-12-31T23:00:00');
pack('format.limits-no-compare', { type: 'string', format: 'email', formatMinimum: 'a' }, 'x');
pack('format.limits-no-format', { type: 'string', formatMinimum: '2020-01-01' }, 'x');
pack('format.limits-number-value', { type: 'string', format: 'date', formatMinimum: 5 }, 'x');
pack('format.unknown-in-anyOf', { anyOf: [{ type: 'string', format: 'zip' }, { type: 'number' }] }, 1);
mcp('format.limits-unknown', { type: 'string', format: 'colour', formatMinimum: 'a' }, 'x');
mcp('format.d7-date-time', { $schema: D7, type: 'string', format: 'date-time' }, '2024-01-01T00:00:00Z', 'x');
mcp('format.d6-uri', { $schema: D6, type: 'string', format: 'uri' }, 'x', 'a:b');

// ---- types, numbers ----------------------------------------------------------------------
pack('type.big-int', { type: 'integer', maximum: 9007199254740991 }, 9007199254740992, 9007199254740991, -9007199254740993);
pack('type.float-int', { type: 'integer' }, 1e300, 1.5e300, -0, 0.1, 2 ** 53 + 0.5);
pack('number.limits-fmt', { type: 'number', minimum: 0.000001, maximum: 123456789012345680000, multipleOf: 0.000001 }, 0, 1e22, 0.0000015, 5e-7);
pack('number.neg-limits', { type: 'number', exclusiveMinimum: -1.5, exclusiveMaximum: -0.5 }, -1.5, -0.5, -1, -2);
pack('number.multipleOf-float', { type: 'number', multipleOf: 0.1 }, 0.2, 0.7, 1.1, 3.3, 100.1, 1e-16, 0);
pack('number.multipleOf-big', { type: 'number', multipleOf: 3 }, 9007199254740991, 1e21, 3e20, -9);
pack('number.multipleOf-decimal', { type: 'number', multipleOf: 0.25 }, 0.75, 0.3, -0.5);
pack('number.multipleOf-1e-8', { type: 'number', multipleOf: 1e-8 }, 0.00000003, 1, 1.000000001);
pack('number.min-integer-type', { type: 'integer', minimum: 1.5, maximum: 1e21 }, 1, 2, 1e22);
pack('type.union-all', { type: ['null', 'boolean', 'object', 'array', 'number', 'string'] }, null, true, {}, [], 1, 'x');
pack('type.union-int-num', { type: ['integer', 'number'], minimum: 2 }, 1.5, 'x', 3);
pack('type.array-one', { type: ['string'], minLength: 2 }, 'a', 1);
pack('type.array-object', { type: ['object'], required: [], properties: {} }, [], {});
pack('type.nullable-object', { type: 'object', nullable: true, properties: { a: { type: 'string' } } }, null, { a: 1 }, 'x');
pack('type.nullable-false', { type: 'string', nullable: false }, null, 'x');
pack('type.null-nullable-false', { type: ['string', 'null'], nullable: false }, null);
pack('type.nullable-bad', { type: 'string', nullable: 'yes' }, 'x');
pack('type.string-no-group', { type: 'string', const: 'x' }, 1, 'y');
pack('type.object-only-uneval', { type: 'object', unevaluatedProperties: false }, 1, { a: 1 });
pack('type.array-only-uneval', { type: 'array', unevaluatedItems: false }, 1, [1]);
pack('type.number-with-format', { type: 'number', format: 'int32' }, 'x');
pack('type.integer-keywords', { type: 'integer', minimum: 5, enum: [1, 7] }, 'x', 1.5, 3);

// ---- strings, unicode, patterns --------------------------------------------------------
pack('string.unicode-lengths', { type: 'string', minLength: 3, maxLength: 4 }, 'héé', '日本語', '👨‍👩‍👧', 'a😀b', '\u0301\u0301\u0301', 'ab');
pack('string.zero-length', { type: 'string', maxLength: 0 }, '', 'a');
pack('pattern.unicode-class', { type: 'string', pattern: '^[\\p{Script=Greek}]+$' }, 'αβγ', 'abc');
pack('pattern.lookbehind', { type: 'string', pattern: '(?<=a)b' }, 'ab', 'cb');
pack('pattern.named', { type: 'string', pattern: '^(?<y>\\d{4})-\\k<y>$' }, '2024-2024', '2024-2025');
pack('pattern.dot-newline', { type: 'string', pattern: '^.+$' }, 'a\nb', 'ab');
pack('pattern.case', { type: 'string', pattern: '[A-Z]' }, 'abc', 'aBc');
pack('pattern.anchors-unanchored', { type: 'string', pattern: 'b' }, 'abc', 'xyz');
pack('pattern.w-unicode', { type: 'string', pattern: '^\\w+$' }, 'héllo', 'hello_1');
pack('pattern.s-unicode', { type: 'string', pattern: '^\\s$' }, '\u00a0', '\u2003', 'x');
pack('pattern.astral-class', { type: 'string', pattern: '^[😀-😂]$' }, '😁', 'a');
pack('pattern.bad-quantifier', { type: 'string', pattern: 'a**' }, 'a');
pack('pattern.bad-brace', { type: 'string', pattern: 'a{' }, 'a');
pack('pattern.bad-class-range', { type: 'string', pattern: '[z-a]' }, 'a');
pack('pattern.bad-property', { type: 'string', pattern: '\\p{Nope}' }, 'a');
pack('pattern.unmatched-paren', { type: 'string', pattern: 'a)' }, 'a');
pack('pattern.bad-backref', { type: 'string', pattern: '\\k<x>' }, 'a');
pack('pattern.lone-bracket', { type: 'string', pattern: ']' }, 'a');
pack('pattern.bad-escape-d', { type: 'string', pattern: '\\a' }, 'a');
mcp('pattern.bad-in-mcp', { type: 'string', pattern: '(?<a>x)(?<a>y)' }, 'xy');
pack('pattern.properties-bad', { type: 'object', patternProperties: { '[': { type: 'string' } } }, {});
pack('pattern.escaped-slash', { type: 'string', pattern: '^a\\/b$' }, 'a/b');
pack('pattern.keys-with-slash', { type: 'object', patternProperties: { '^a/': { type: 'integer' }, '~': { type: 'integer' } }, additionalProperties: false }, { 'a/b': 'x', 'c~d': 'y', e: 1 });

// ---- const / enum / equality --------------------------------------------------------------
pack('const.deep', { const: { a: [1, { b: null }], c: 'x' } }, { c: 'x', a: [1, { b: null }] }, { a: [1, { b: null }], c: 'x', d: 1 }, { a: [1, {}], c: 'x' });
pack('const.number-forms', { const: 1 }, 1.0, 1.0000000000000002, '1', true);
pack('const.array', { const: [1, 2] }, [1, 2], [2, 1], [1, 2, 3]);
pack('const.false', { const: false }, false, 0, null);
pack('enum.numbers', { enum: [0, -0, 0.1, 1e21] }, 0, -0, 0.1, 1e21, 0.2);
pack('enum.objects', { enum: [{ a: 1 }, [1], null, 'x'] }, { a: 1.0 }, { a: 1, b: 2 }, [1], [[1]], null);
pack('enum.with-type', { type: 'integer', enum: [1, 2, 'x'] }, 'x', 3, 1.5);
pack('enum.bad-type', { enum: 'x' }, 1);

// ---- objects --------------------------------------------------------------------------------
pack('object.many-props-additional', { type: 'object', properties: Object.fromEntries('abcdefghij'.split('').map((k) => [k, { type: 'integer' }])), additionalProperties: false }, { a: 1, z: 2, j: 'x' });
pack('object.additional-schema-patterns', { type: 'object', properties: { a: { type: 'string' } }, patternProperties: { '^x': { type: 'number' } }, additionalProperties: { type: 'boolean' } }, { a: 'a', x1: 1, b: true, c: 'no', x2: 'no' });
pack('object.additional-true', { type: 'object', additionalProperties: true, properties: { a: { type: 'string' } } }, { a: 1, b: 2 });
pack('object.additional-empty', { type: 'object', additionalProperties: {} }, { a: 1 });
pack('object.integer-key-order', { type: 'object', additionalProperties: false }, { b: 1, 10: 1, a: 1, 2: 1, '-1': 1, '01': 1, 4294967295: 1, 4294967294: 1 });
pack('object.properties-integer-order', { type: 'object', properties: { b: { type: 'string' }, 10: { type: 'string' }, 1: { type: 'string' } } }, { 1: 1, b: 1, 10: 1 });
pack('object.required-many', { type: 'object', properties: { a: {}, b: {}, c: {} }, required: ['c', 'a', 'b'] }, {}, { b: 1 });
pack('object.required-proto', { type: 'object', properties: { constructor: { type: 'string' }, toString: {} }, required: ['toString'] }, {});
pack('object.proto-in-properties', { type: 'object', properties: { hasOwnProperty: { type: 'number' } } }, {}, { hasOwnProperty: 1 });
pack('object.min-max-props', { type: 'object', minProperties: 1, maxProperties: 2 }, {}, { a: 1, b: 2, c: 3 });
pack('object.prop-names-pattern', { type: 'object', propertyNames: { pattern: '^[a-z]+$', minLength: 2 } }, { ab: 1, A: 2, b: 3 });
pack('object.prop-names-enum', { type: 'object', propertyNames: { enum: ['a', 'b'] } }, { a: 1, c: 2 });
pack('object.prop-names-format', { type: 'object', propertyNames: { format: 'email' } }, { 'a@b.co': 1, x: 2 });
pack('object.prop-names-true', { type: 'object', propertyNames: true }, { a: 1 });
pack('object.prop-names-number-kw', { type: 'object', propertyNames: { maximum: 3 } }, { a: 1 });
pack('object.nested-prop-names', { type: 'object', properties: { o: { type: 'object', propertyNames: { maxLength: 1 } } } }, { o: { ab: 1 } });
pack('object.prop-names-anyOf', { type: 'object', propertyNames: { anyOf: [{ const: 'a' }, { maxLength: 1 }] } }, { bb: 1, c: 1 });
pack('object.dep-required-multi', { type: 'object', properties: { a: {}, b: {}, c: {} }, dependentRequired: { a: ['b', 'c'], b: ['c'] } }, { a: 1 }, { b: 1 }, { c: 1 });
pack('object.dep-required-empty', { type: 'object', dependentRequired: { a: [] } }, { a: 1 });
pack('object.dep-schemas-false', { type: 'object', dependentSchemas: { a: false, b: true } }, { a: 1 }, { b: 1 });
pack('object.dependencies-mixed', { type: 'object', properties: { a: {}, b: {}, c: {} }, dependencies: { c: { required: ['a'] }, a: ['b'] } }, { a: 1, c: 1 });
pack('object.dependencies-integer-keys', { type: 'object', dependencies: { b: ['x'], 1: ['y'] } }, { 1: 1, b: 1 });
pack('object.deep-nesting', { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'object', properties: { c: { type: 'object', properties: { d: { type: 'array', items: { type: 'object', properties: { e: { type: 'integer', minimum: 0 } } } } } } } } } } } }, { a: { b: { c: { d: [{ e: 1 }, { e: -1 }, { e: 'x' }] } } } });
pack('object.escaped-everything', { type: 'object', properties: { 'a b/c~d%e': { type: 'integer' }, 'ü': { type: 'integer' }, '': { type: 'integer' } } }, { 'a b/c~d%e': 'x', 'ü': 'y', '': 'z' });
pack('object.unicode-keys-additional', { type: 'object', properties: { 'é': true }, additionalProperties: false }, { 'é': 1, 'e\u0301': 2, '😀': 3 });
pack('object.pattern-props-both-match', { type: 'object', patternProperties: { a: { type: 'string' }, b: { minLength: 2 } } }, { ab: 'x', ba: 1, c: 2 });

// ---- arrays ---------------------------------------------------------------------------------
pack('array.items-schema-errors', { type: 'array', items: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } }, minItems: 3 }, [{}, { id: 'x' }]);
pack('array.prefix-items-false', { type: 'array', prefixItems: [{ const: 1 }, { const: 2 }], items: false, minItems: 2 }, [1, 2, 3, 4], [2, 1]);
pack('array.prefix-items-schema-rest', { type: 'array', prefixItems: [{ type: 'string' }], minItems: 1, maxItems: 1 }, ['a', 'b'], [1]);
pack('array.prefix-true', { type: 'array', prefixItems: [true, { type: 'integer' }], minItems: 2, items: false }, ['x', 'y'], [1, 2, 3]);
pack('array.contains-min-max', { type: 'array', contains: { type: 'integer' }, minContains: 2, maxContains: 3 }, [1, 'a'], [1, 2, 3, 4], [1, 2], []);
pack('array.contains-max-only', { type: 'array', contains: { type: 'integer' }, maxContains: 1 }, [1, 2], ['a'], [1]);
pack('array.contains-min-zero-max', { type: 'array', contains: { type: 'integer' }, minContains: 0, maxContains: 1 }, [], ['a'], [1, 2]);
pack('array.contains-true', { type: 'array', contains: true, minContains: 2, maxContains: 3 }, [1], [1, 2, 3, 4], [1, 2]);
pack('array.contains-false', { type: 'array', contains: false }, [1], []);
pack('array.contains-min-gt-max', { type: 'array', contains: { type: 'integer' }, minContains: 3, maxContains: 2 }, [1]);
mcp('array.contains-min-gt-max', { type: 'array', contains: { type: 'integer' }, minContains: 3, maxContains: 2 }, [1, 2, 3]);
mcp('array.contains-min-zero', { type: 'array', contains: { type: 'integer' }, minContains: 0 }, ['a']);
pack('array.unique-typed-strings', { type: 'array', items: { type: 'string' }, uniqueItems: true }, ['a', 'b', 'a'], ['1', 1]);
pack('array.unique-mixed-types', { type: 'array', items: { type: ['string', 'number'] }, uniqueItems: true }, ['1', 1, '1'], [1, 2, 1.0]);
pack('array.unique-bool-null', { type: 'array', items: { type: ['boolean', 'null'] }, uniqueItems: true }, [true, null, false, true], [null, null]);
pack('array.unique-objects', { type: 'array', items: { type: 'object' }, uniqueItems: true }, [{ a: 1 }, { a: 2 }, { a: 1 }]);
pack('array.unique-nested', { type: 'array', uniqueItems: true }, [[1, [2]], [1, [2]]], [{ a: [1] }, { a: [1.0] }], [0, -0]);
pack('array.unique-false', { type: 'array', uniqueItems: false }, [1, 1]);
pack('array.unique-integer-float', { type: 'array', items: { type: 'integer' }, uniqueItems: true }, [1.5, 1.5, 2]);
pack('array.items-false-empty', { type: 'array', items: false }, [], [1, 2]);
pack('array.max-min-items-float', { type: 'array', maxItems: 2.5 }, [1, 2, 3]);

// ---- combinators ---------------------------------------------------------------------------
pack('oneOf.three-pass', { oneOf: [{ type: 'number' }, { minimum: 0 }, { maximum: 10 }] }, 5, -5, 50, 'x');
pack('oneOf.true-branch', { oneOf: [true, { type: 'string' }] }, 1, 'x');
pack('oneOf.middle-fail', { oneOf: [{ type: 'number' }, { type: 'string' }, { minimum: 0 }] }, 1, -1);
pack('anyOf.true-branch', { anyOf: [true, { type: 'string' }] }, 1);
pack('anyOf.nested', { anyOf: [{ anyOf: [{ type: 'string' }, { type: 'number' }] }, { type: 'null' }] }, true);
pack('allOf.true-false', { allOf: [true, false] }, 1);
pack('allOf.nested-errors', { allOf: [{ allOf: [{ type: 'string' }, { minLength: 2 }] }, { maxLength: 0 }] }, 'a', 5);
pack('not.true', { not: true }, 1);
pack('not.false', { not: false }, 1);
pack('not.empty', { not: {} }, 1);
pack('not.nested', { not: { not: { type: 'string' } } }, 1, 'x');
pack('if.then-only', { if: { type: 'string' }, then: { minLength: 2 } }, 'a', 1);
pack('if.else-only', { if: { type: 'string' }, else: { type: 'number' } }, true, 'x');
pack('if.bool-branches', { if: true, then: false, else: true }, 1);
pack('if.false-cond', { if: false, then: true, else: { type: 'string' } }, 1);
pack('if.then-true', { if: { type: 'string' }, then: true }, 1);
pack('if.errors-not-reported', { if: { type: 'object', required: ['a'] }, then: { required: ['b'] } }, { a: 1 }, {});

// ---- $ref, $defs, $id, anchors ---------------------------------------------------------------
pack('ref.chain-only-ref', { $defs: { a: { $ref: '#/$defs/b' }, b: { type: 'string', minLength: 2 } }, $ref: '#/$defs/a' }, 'x', 1);
pack('ref.to-ref-with-siblings', { $defs: { a: { $ref: '#/$defs/b', maxLength: 3 }, b: { type: 'string' } }, type: 'object', properties: { p: { $ref: '#/$defs/a' } } }, { p: 'abcd' }, { p: 1 });
pack('ref.nested-defs', { $defs: { outer: { $defs: { inner: { type: 'integer' } }, type: 'object', properties: { v: { $ref: '#/$defs/outer/$defs/inner' } } } }, $ref: '#/$defs/outer' }, { v: 'x' });
pack('ref.array-index', { type: 'object', properties: { a: { anyOf: [{ type: 'integer' }, { type: 'string' }] }, b: { $ref: '#/properties/a/anyOf/1' } } }, { b: 5 });
pack('ref.percent-encoded', { type: 'object', properties: { a: { $ref: '#/$defs/%25x' } }, $defs: { '%x': { type: 'string' } } }, { a: 1 });
pack('ref.id-relative', { $id: 'https://example.com/schemas/root.json', type: 'object', properties: { a: { $ref: 'defs.json#/$defs/s' }, b: { $ref: 'https://example.com/schemas/defs.json#/$defs/s' } }, $defs: { x: { $id: 'defs.json', $defs: { s: { type: 'string' } } } } }, { a: 1, b: 2 });
pack('ref.id-nested-base', { $id: 'https://example.com/a/', type: 'object', properties: { p: { $ref: 'b/c.json' } }, $defs: { c: { $id: 'b/c.json', type: 'integer' } } }, { p: 'x' });
pack('ref.urn-id', { $id: 'urn:example:root', type: 'object', properties: { a: { $ref: 'urn:example:item' } }, $defs: { item: { $id: 'urn:example:item', type: 'boolean' } } }, { a: 1 });
pack('ref.root-by-id', { $id: 'https://example.com/tree', type: 'object', properties: { kids: { type: 'array', items: { $ref: 'https://example.com/tree' } }, v: { type: 'integer' } } }, { kids: [{ v: 'x' }] });
pack('ref.missing-nested', { type: 'object', properties: { a: { type: 'array', items: { $ref: '#/$defs/nope' } } } }, {});
pack('ref.missing-relative', { $id: 'https://example.com/x/y.json', $ref: 'z.json' }, 1);
pack('ref.to-meta', { $ref: 'https://json-schema.org/draft/2020-12/schema' }, { type: 'strng' }, { type: 'string' });
pack('ref.mutual-recursion', { $defs: { a: { type: 'object', properties: { b: { $ref: '#/$defs/b' } } }, b: { type: 'object', properties: { a: { $ref: '#/$defs/a' }, n: { type: 'integer' } } } }, $ref: '#/$defs/a' }, { b: { a: { b: { n: 'x' } } } });
pack('ref.boolean-target', { $defs: { no: false }, type: 'object', properties: { a: { $ref: '#/$defs/no' } } }, { a: 1 });
pack('ref.with-type-sibling', { $defs: { s: { type: 'string' } }, type: 'string', $ref: '#/$defs/s', minLength: 2 }, 1, 'a');
pack('ref.in-items-inline', { $defs: { n: { type: 'number', maximum: 5 } }, type: 'array', items: { $ref: '#/$defs/n' } }, [1, 6, 'x']);
pack('ref.unused-defs-invalid', { $defs: { bad: { type: 'strng' } }, type: 'string' }, 'a');
pack('ref.defs-strict-types', { $defs: { n: { minimum: 1 } }, type: 'object', properties: { a: { $ref: '#/$defs/n' } } }, { a: 0 });
pack('ref.default-in-target-root', { $defs: { d: { type: 'object', properties: { x: { $ref: '#/$defs/d' } }, default: {} } }, type: 'object', properties: { a: { $ref: '#/$defs/d' } } }, { a: {} });
packIn('ref.default-in-target-root', { $defs: { d: { type: 'object', properties: { x: { $ref: '#/$defs/d' } }, default: {} } }, type: 'object', properties: { a: { $ref: '#/$defs/d' } } }, { a: {} });
pack('ref.dynamic-anchor-name-invalid', { $dynamicAnchor: '1bad', type: 'object' }, {});
pack('ref.anchor-ambiguous', { $id: 'https://example.com/r', $defs: { a: { $id: 'https://example.com/x', type: 'string' }, b: { $id: 'https://example.com/x', type: 'number' } } }, 1);
mcp('ref.anchor-d20', { type: 'array', items: { $ref: '#item' }, $defs: { i: { $anchor: 'item', type: 'integer' } } }, [1, 'x']);
mcp('ref.anchor-bad-name', { $defs: { i: { $anchor: 'not valid', type: 'integer' } } }, 1);
mcp('ref.d7-id-anchor', { $schema: D7, type: 'object', properties: { a: { $ref: '#foo' } }, definitions: { f: { $id: '#foo', type: 'string' } } }, { a: 1 });
mcp('ref.d7-ref-override', { $schema: D7, definitions: { s: { type: 'string', minLength: 3 } }, type: 'object', properties: { a: { $ref: '#/definitions/s', maxLength: 1 } } }, { a: 'ab' });
mcp('ref.d19-defs', { $schema: D19, $defs: { p: { type: 'integer', exclusiveMinimum: 0 } }, type: 'array', items: { $ref: '#/$defs/p' } }, [0, 1, 'x']);
mcp('ref.d6-id', { $schema: D6, $id: 'http://example.com/root.json', definitions: { a: { $id: 'a.json', type: 'integer' } }, properties: { x: { $ref: 'a.json' } } }, { x: 'y' });
mcp('ref.remote-missing', { $ref: 'https://example.com/remote.json#/x' }, 1);
mcp('ref.self-root-loop', { anyOf: [{ type: 'string' }, { type: 'array', items: { $ref: '#' } }] }, [['a', [1]]]);

// ---- $dynamicRef / $recursiveRef ------------------------------------------------------------
pack('dynamic.list-of-strings', { $id: 'https://example.com/strings', $dynamicAnchor: 'T', $ref: 'https://example.com/list', $defs: { list: { $id: 'https://example.com/list', $dynamicAnchor: 'T', type: 'array', items: { $dynamicRef: '#T' } }, s: { $dynamicAnchor: 'T', type: 'string' } } }, [['a']], ['a']);
pack('dynamic.no-anchor-fallback', { type: 'object', properties: { n: { $dynamicRef: '#missing' }, v: { type: 'integer' } } }, { n: { v: 'x' } });
pack('dynamic.non-hash', { type: 'object', properties: { n: { $dynamicRef: 'other.json#x' } } }, {});
pack('dynamic.anchor-in-defs', { $defs: { node: { $dynamicAnchor: 'node', type: 'object', properties: { next: { $dynamicRef: '#node' }, v: { type: 'string' } } } }, $ref: '#/$defs/node' }, { next: { next: { v: 1 } } });
mcp('dynamic.d19-recursive-anchor-false', { $schema: D19, $recursiveAnchor: false, type: 'object', properties: { a: { $recursiveRef: '#' } } }, { a: 1 });
pack('dynamic.recursive-anchor-false', { $recursiveAnchor: false, type: 'object', properties: { a: { $recursiveRef: '#' } } }, { a: 1 });
mcp('dynamic.d19-recursive-tree', { $schema: D19, $id: 'https://example.com/t', $recursiveAnchor: true, type: 'object', properties: { v: { type: 'number' }, c: { type: 'array', items: { $recursiveRef: '#' } } }, required: ['v'] }, { v: 1, c: [{ v: 'x', c: [{}] }] });

// ---- unevaluated* -----------------------------------------------------------------------------
pack('uneval.props-nested-allOf', { type: 'object', allOf: [{ allOf: [{ properties: { a: true } }] }, { properties: { b: true } }], unevaluatedProperties: false }, { a: 1, b: 2, c: 3 });
pack('uneval.props-pattern', { type: 'object', patternProperties: { '^x': true }, unevaluatedProperties: { type: 'number' } }, { x1: 'a', y: 'b', z: 1 });
pack('uneval.props-additional', { type: 'object', properties: { a: true }, additionalProperties: { type: 'string' }, unevaluatedProperties: false }, { a: 1, b: 'x', c: 2 });
pack('uneval.props-oneOf', { type: 'object', oneOf: [{ properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'string' } }, required: ['b'] }], unevaluatedProperties: false }, { a: 'x' }, { a: 'x', b: 'y' }, { a: 'x', c: 1 }, { c: 1 });
pack('uneval.props-not', { type: 'object', not: { properties: { a: { type: 'string' } }, required: ['a'] }, unevaluatedProperties: false }, { b: 1 });
pack('uneval.props-dependentSchemas', { type: 'object', properties: { a: true }, dependentSchemas: { a: { properties: { b: true } } }, unevaluatedProperties: false }, { a: 1, b: 2 }, { b: 2 }, { a: 1, c: 3 });
pack('uneval.props-ref-recursive', { $defs: { n: { type: 'object', properties: { next: { $ref: '#/$defs/n' }, v: true } } }, $ref: '#/$defs/n', unevaluatedProperties: false }, { v: 1, next: { v: 2, zz: 3 }, yy: 4 });
pack('uneval.props-nested-uneval', { type: 'object', properties: { a: { type: 'object', unevaluatedProperties: false } }, unevaluatedProperties: false }, { a: { x: 1 }, b: 2 });
pack('uneval.props-schema-errors', { type: 'object', properties: { a: true }, unevaluatedProperties: { type: 'string', minLength: 2 } }, { a: 1, b: 'x', c: 3, d: 'ok' });
pack('uneval.props-if-then-else', { type: 'object', if: { properties: { t: { const: 1 } }, required: ['t'] }, then: { properties: { a: true } }, else: { properties: { b: true } }, unevaluatedProperties: false }, { t: 1, a: 1 }, { t: 1, b: 1 }, { t: 2, b: 1 }, { b: 1 });
pack('uneval.props-true', { type: 'object', unevaluatedProperties: true }, { a: 1 });
pack('uneval.items-prefix', { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], minItems: 2, maxItems: 4, unevaluatedItems: { type: 'boolean' } }, ['a', 1, true, 'x'], ['a', 1]);
pack('uneval.items-allOf-prefix', { type: 'array', allOf: [{ prefixItems: [true, true], minItems: 2, items: false }], unevaluatedItems: false }, [1, 2]);
pack('uneval.items-anyOf-prefix', { type: 'array', anyOf: [{ prefixItems: [{ type: 'string' }], minItems: 1, maxItems: 1 }, { prefixItems: [true, true], minItems: 2, maxItems: 2 }], unevaluatedItems: false }, ['a'], [1, 2], ['a', 'b', 'c']);
pack('uneval.items-oneOf-items', { type: 'array', oneOf: [{ items: { type: 'string' } }, { items: { type: 'number' } }], unevaluatedItems: false }, ['a', 'b'], [1, 2, 3], [1]);
pack('uneval.items-if', { type: 'array', if: { prefixItems: [{ const: 1 }], minItems: 1, maxItems: 3 }, then: { prefixItems: [true, { type: 'string' }], minItems: 2, maxItems: 3 }, unevaluatedItems: false }, [1, 'a'], [1, 'a', 'b'], [2, 3]);
pack('uneval.items-ref', { $defs: { t: { type: 'array', prefixItems: [{ type: 'integer' }], minItems: 1, maxItems: 5 } }, $ref: '#/$defs/t', unevaluatedItems: { type: 'string' } }, [1, 'a', 2]);
pack('uneval.items-true', { type: 'array', unevaluatedItems: true }, [1]);
pack('uneval.items-contains-fail', { type: 'array', contains: { type: 'string' }, unevaluatedItems: false }, [1, 2]);
mcp('uneval.d19-items-additional', { $schema: D19, type: 'array', items: [{ type: 'string' }], additionalItems: { type: 'integer' }, unevaluatedItems: false }, ['a', 1, 'b']);
mcp('uneval.d19-props-ref', { $schema: D19, $defs: { b: { properties: { a: true } } }, $ref: '#/$defs/b', unevaluatedProperties: false }, { a: 1, b: 2 });
mcp('uneval.d20-props-ref', { $defs: { b: { properties: { a: true } } }, $ref: '#/$defs/b', unevaluatedProperties: false }, { a: 1, b: 2 });
mcp('uneval.d20-items-ref', { $defs: { b: { prefixItems: [true] } }, $ref: '#/$defs/b', unevaluatedItems: false }, [1, 2]);

// ---- defaults --------------------------------------------------------------------------------
packIn('defaults.nested-objects', { type: 'object', properties: { a: { type: 'object', default: {}, properties: { b: { type: 'object', default: {}, properties: { c: { type: 'integer', default: 7 } } } } } } }, {}, { a: null }, { a: { b: { c: 1 } } });
packIn('defaults.array-of-objects', { type: 'array', items: { type: 'object', properties: { x: { type: 'string', default: 'd' } } } }, [{}, { x: 'y' }, 1]);
packIn('defaults.integer-keys', { type: 'object', properties: { b: { default: 1 }, 3: { default: 2 }, 1: { default: 3 } } }, { z: 0, 2: 0 });
packIn('defaults.proto-names', { type: 'object', properties: { constructor: { default: 'c' }, toString: { default: 't' }, x: { default: 1 } } }, {});
packIn('defaults.complex-values', { type: 'object', properties: { arr: { type: 'array', default: [1, { a: 2 }] }, n: { type: 'null', default: null }, o: { type: 'object', default: { z: 1, a: 2 } } } }, {});
packIn('defaults.with-required-missing', { type: 'object', properties: { a: { type: 'string', default: 'x' }, b: { type: 'string' } }, required: ['a', 'b'] }, {});
packIn('defaults.allOf-then-validate', { type: 'object', allOf: [{ required: ['x'] }, { properties: { x: { type: 'integer', default: 5 } } }] }, {});
packIn('defaults.dep-schemas-additional', { type: 'object', properties: { tls: { type: 'boolean' } }, additionalProperties: false, dependentSchemas: { tls: { properties: { cert: { type: 'string', default: 'c' } } } } }, { tls: true });
packIn('defaults.else', { type: 'object', if: { required: ['a'] }, then: { properties: { b: { default: 1 } } }, else: { properties: { c: { default: 2 } } } }, {}, { a: 1 });
packIn('defaults.ref-target-props', { $defs: { cfg: { type: 'object', properties: { lvl: { type: 'string', default: 'info' } } } }, type: 'object', properties: { cfg: { $ref: '#/$defs/cfg', default: {} } } }, {});
packIn('defaults.items-2020', { type: 'array', items: { type: 'string', default: 'x' } }, [], ['a']);
packIn('defaults.oneOf-strict', { type: 'object', properties: { a: { type: 'object', oneOf: [{ properties: { 5: { default: 1 } } }] } } }, {});
packIn('defaults.contains-strict', { type: 'array', contains: { type: 'object', properties: { a: { default: 1 } } } }, []);
packIn('defaults.not-strict', { type: 'object', not: { properties: { a: { default: 1 } } } }, {});
packIn('defaults.propertyNames-nested', { type: 'object', properties: { p: { type: 'array', items: { type: 'object', anyOf: [{ properties: { q: { default: 1 } } }] } } } }, {});
packIn('defaults.uneval-then-default', { type: 'object', properties: { a: { default: 1 } }, unevaluatedProperties: false }, { b: 2 });
packIn('defaults.default-invalid-type', { type: 'object', properties: { a: { type: 'integer', default: 'x' } } }, {});
mcpIn('defaults.d7-items', { $schema: D7, type: 'array', items: [{ default: 'a' }, { default: 'b' }, { default: 'c' }] }, [], ['x'], ['x', 'y', 'z', 'w']);
mcpIn('defaults.d19-items', { $schema: D19, type: 'array', items: [{ type: 'integer' }, { default: 0 }] }, [5]);
mcpIn('defaults.d20-anyOf-dropped', { type: 'object', anyOf: [{ properties: { a: { default: 1 } } }], properties: { b: { default: 2 } } }, {});
mcpIn('defaults.d20-root-dropped', { type: 'object', default: { a: 1 }, properties: { c: { default: 3 } } }, {});
mcpIn('defaults.d20-ref-target', { $defs: { o: { type: 'object', properties: { k: { default: 'v' } } } }, type: 'object', properties: { o: { $ref: '#/$defs/o' } } }, { o: {} });
mcpIn('defaults.d20-ref-in-anyOf', { $defs: { o: { type: 'object', properties: { k: { default: 'v' } } } }, anyOf: [{ $ref: '#/$defs/o' }] }, {});
mcpIn('defaults.d6', { $schema: D6, type: 'object', properties: { a: { type: 'object', default: { x: 1 }, properties: { y: { default: 2 } } } } }, {});

// ---- strict mode ------------------------------------------------------------------------------
pack('strict.id-keyword', { id: 'x', type: 'string' }, 'a');
pack('strict.schema-number', { $schema: 5, type: 'string' }, 'a');
pack('strict.schema-2019', { $schema: D19, type: 'string' }, 'a');
pack('strict.unknown-in-items', { type: 'array', items: { type: 'string', foo: 1 } }, []);
pack('strict.unknown-in-not', { not: { bar: 1 } }, 1);
pack('strict.unknown-in-true-branch', { type: 'object', properties: { a: { 'x-y': 1 } } }, {});
pack('strict.unknown-integer-key', { 5: true, type: 'string' }, 'a');
pack('strict.comment-only', { $comment: 'x' }, 1);
pack('strict.types-items', { type: 'array', items: { minLength: 1 } }, []);
pack('strict.types-in-then', { type: 'string', if: { minLength: 1 }, then: { maxLength: 3 } }, 'abcd');
pack('strict.types-in-allOf-no-type', { allOf: [{ type: 'string' }, { minLength: 2 }] }, 'a');
pack('strict.types-integer-number', { type: 'integer', anyOf: [{ type: 'number', minimum: 2 }] }, 1);
pack('strict.types-number-integer', { type: 'number', anyOf: [{ type: 'integer' }] }, 1.5);
pack('strict.types-union-narrow', { type: ['string', 'number'], anyOf: [{ type: 'string', minLength: 2 }, { type: 'boolean' }] }, 'a');
pack('strict.types-with-id', { $id: 'https://example.com/s', type: 'object', properties: { a: { maximum: 1 } } }, {});
pack('strict.required-via-defined', { type: 'object', allOf: [{ properties: { a: true } }], required: ['a'] }, {});
pack('strict.required-in-then', { type: 'object', properties: { a: true }, if: { required: ['a'] }, then: { required: ['a'] } }, {});
pack('strict.required-proto-name', { type: 'object', properties: {}, required: ['toString'] }, {});
pack('strict.tuple-exact', { type: 'array', prefixItems: [true, true], minItems: 2, maxItems: 2 }, [1, 2, 3]);
pack('strict.tuple-items-false-min', { type: 'array', prefixItems: [true], minItems: 0, items: false }, []);
pack('strict.additionalItems-no-items', { type: 'array', additionalItems: false }, []);
pack('strict.min-contains-alone', { type: 'array', minContains: 1 }, []);
pack('strict.else-alone', { else: { type: 'string' } }, 1);
pack('strict.matching-properties', { type: 'object', properties: { abc: true }, patternProperties: { '^a': true } }, {});
pack('strict.dynamicRef-unknown-in-2020', { type: 'object', properties: { a: { $recursiveRef: '#' } } }, { a: 1 });
pack('strict.default-root-no-rules', { default: 1, title: 't' }, 1);
packIn('strict.default-root-no-rules-input', { default: 1, title: 't' }, 1);
packIn('strict.default-in-ref-function', { $defs: { r: { $ref: '#/$defs/s', default: 1 }, s: { type: 'integer' } }, type: 'object', properties: { a: { $ref: '#/$defs/r' } } }, {});
pack('strict.format-unknown-number-type', { type: 'number', format: 'money' }, 1);
pack('strict.meta-minLength-negative', { type: 'string', minLength: -1 }, 'a');
pack('strict.meta-required-dupes', { type: 'object', properties: { a: true }, required: ['a', 'a'] }, {});
pack('strict.meta-type-array-dupes', { type: ['string', 'string'] }, 'a');
pack('strict.meta-properties-not-object', { type: 'object', properties: [] }, {});
pack('strict.meta-multipleOf-zero', { type: 'number', multipleOf: 0 }, 1);
pack('strict.meta-enum-not-array', { enum: { a: 1 } }, 1);
pack('strict.meta-several-errors', { type: 'object', properties: { a: { type: 1 } }, minProperties: 'x', required: 'a' }, {});
pack('strict.meta-pattern-not-string', { type: 'string', pattern: 5 }, 'a');
pack('strict.meta-id-not-string', { $id: 5 }, 1);
pack('strict.meta-schema-array', [], 1);
pack('strict.meta-schema-number', 5, 1);
pack('strict.meta-dependentRequired-bad', { type: 'object', dependentRequired: { a: 'b' } }, {});
pack('strict.meta-items-array-in-properties', { type: 'object', properties: { a: { type: 'array', items: [{ type: 'string' }] } } }, {});
mcp('strict.d7-meta-items-number', { $schema: D7, type: 'array', items: 5 }, []);
mcp('strict.d6-meta-if-ignored', { $schema: D6, if: 5 }, 1);
mcp('strict.d19-meta', { $schema: D19, type: 'object', properties: { a: { minimum: 'x' } } }, {});
mcp('strict.d20-meta-const-any', { const: { $ref: 'x' } }, { $ref: 'x' }, 1);
mcp('dialect.none-object', { $schema: null, type: 'string' }, 'a');
mcp('dialect.array', { $schema: ['x'] }, 'a');
mcp('dialect.hash-only', { $schema: 'http://json-schema.org/draft-07/schema##' }, 1);
mcp('dialect.d19-hash', { $schema: 'https://json-schema.org/draft/2019-09/schema#', type: 'integer' }, 1.5);

// ---- MCP dialect behaviour ------------------------------------------------------------------
mcp('d7.exclusive-bool-invalid', { $schema: D7, type: 'number', exclusiveMaximum: true, maximum: 5 }, 5);
mcp('d7.contains-minContains-ignored', { $schema: D7, type: 'array', contains: { type: 'string' }, minContains: 2 }, ['a']);
mcp('d7.unevaluatedItems-ignored', { $schema: D7, type: 'array', unevaluatedItems: false }, [1]);
mcp('d7.items-array-additional-schema', { $schema: D7, type: 'array', items: [{ type: 'integer' }], additionalItems: { type: 'string' } }, [1, 'a', 2]);
mcp('d7.additionalItems-without-items-array', { $schema: D7, type: 'array', items: { type: 'integer' }, additionalItems: false }, [1, 2]);
mcp('d7.dependencies-schema', { $schema: D7, type: 'object', dependencies: { a: { properties: { b: { type: 'string' } } } } }, { a: 1, b: 2 });
mcp('d7.anyOf-true-short', { $schema: D7, anyOf: [{ type: 'string' }, true] }, 1);
mcp('d7.nullable', { $schema: D7, type: 'string', nullable: true }, null);
mcp('d7.format-limits', { $schema: D7, type: 'string', format: 'date', formatMaximum: '2020-01-01' }, '2021-01-01');
mcp('d6.examples-bool', { $schema: D6, type: 'string', examples: ['x'] }, 1);
mcp('d6.const-contains', { $schema: D6, type: 'array', contains: { const: 2 } }, [1], [2]);
mcp('d19.additionalItems-unevaluated', { $schema: D19, type: 'array', items: [true], additionalItems: false }, [1, 2]);
mcp('d19.dependentSchemas', { $schema: D19, dependentSchemas: { a: { required: ['b'] } } }, { a: 1 });
mcp('d19.min-contains-zero', { $schema: D19, type: 'array', contains: { type: 'string' }, minContains: 0, maxContains: 0 }, [], ['a'], [1]);
mcp('d20.mixed-unknown', { type: 'object', foo: { $ref: '#/nope' }, properties: { a: { type: 'string', bar: 1 } } }, { a: 1 });
mcp('d20.strict-types-off', { properties: { a: { type: 'string' } }, minimum: 1 }, { a: 1 }, 0);
mcp('d20.required-undefined-off', { type: 'object', required: ['a'] }, {});
mcp('d20.tuple-open-off', { type: 'array', prefixItems: [{ type: 'string' }] }, ['a', 1]);
mcp('d20.if-alone-off', { if: { type: 'string' } }, 1);
mcp('d20.then-alone-off', { then: { type: 'string' } }, 1);
mcp('d20.additionalItems-2020', { type: 'array', items: { type: 'string' }, additionalItems: false }, ['a']);
mcp('d20.discriminator-ignored', { type: 'object', discriminator: { propertyName: 'k' } }, {});
mcp('d20.id-keyword', { id: 'x' }, 1);
mcp('d20.nullable-no-type', { nullable: true }, null);
mcp('d20.deep-ref-paths', { $defs: { a: { type: 'object', properties: { b: { $ref: '#/$defs/b' } } }, b: { type: 'array', items: { $ref: '#/$defs/c' } }, c: { type: 'integer' } }, $ref: '#/$defs/a' }, { b: [1, 'x'] });

// ---- big and deep documents (within what both engines handle) ------------------------------------
let deepSchema = { type: 'integer' };
for (let i = 0; i < 40; i++) deepSchema = { type: 'object', properties: { n: deepSchema }, required: ['n'] };
let deepValue = 'x';
for (let i = 0; i < 40; i++) deepValue = { n: deepValue };
pack('deep.forty-levels', deepSchema, deepValue, { n: {} });
pack('deep.recursive-ref', { $defs: { t: { type: 'array', items: { $ref: '#/$defs/t' }, maxItems: 1 } }, $ref: '#/$defs/t' }, JSON.parse('['.repeat(50) + ']'.repeat(50)), JSON.parse('['.repeat(30) + '1,2' + ']'.repeat(30)));
pack('big.many-errors', { type: 'array', items: { type: 'integer' } }, Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? 'x' : i)));
pack('big.many-keys', { type: 'object', additionalProperties: { type: 'string' } }, Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i % 5 === 0 ? i : 's'])));

// ---- round 2: more combinations -------------------------------------------------------------
pack('r2.dep-required-inherited', { type: 'object', properties: { a: true }, dependentRequired: { toString: ['a'] } }, {}, { a: 1 });
pack('r2.required-proto', JSON.parse('{"type": "object", "properties": {"__proto__": {"type": "string"}}, "required": ["__proto__"]}'), {}, JSON.parse('{"__proto__": 1}'));
pack('r2.const-big', { const: 1e21 }, 1000000000000000000000, 1e21, 1.0000000000000001e21);
pack('r2.limits-extreme', { type: 'number', maximum: 1.7976931348623157e308, minimum: -1e-300, exclusiveMaximum: 1e308 }, -1, 1.5e308, 0);
pack('r2.multipleOf-tiny', { type: 'number', multipleOf: 1e-300 }, 1, 1e-10);
pack('r2.multipleOf-neg', { type: 'number', multipleOf: 2 }, -4, -3, -0);
pack('r2.exclusive-integer', { type: 'integer', exclusiveMaximum: 10, exclusiveMinimum: 0 }, 10, 0, 5, 9.5);
pack('r2.anyOf-propertyNames', { type: 'object', anyOf: [{ propertyNames: { maxLength: 1 } }, { required: ['zz'], properties: { zz: true } }] }, { ab: 1 }, { a: 1 });
pack('r2.oneOf-nested-errors', { oneOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { type: 'array', items: { type: 'number' } }] }, { a: 1 }, [1, 'x'], [1], { a: 'x' });
pack('r2.if-unevaluatedItems', { type: 'array', if: { prefixItems: [{ const: 'h' }], minItems: 1, maxItems: 3 }, then: { prefixItems: [true, { type: 'number' }], minItems: 2, maxItems: 3 }, else: { items: { type: 'string' } }, unevaluatedItems: false }, ['h', 1], ['h', 1, 2], ['x', 'y'], ['x', 1]);
pack('r2.contains-uneval-nested', { type: 'array', contains: { type: 'object', required: ['k'], properties: { k: true } }, unevaluatedItems: { type: 'object' } }, [{ k: 1 }, 'x'], [{}, 1]);
pack('r2.propertyNames-ref', { $defs: { name: { type: 'string', pattern: '^[a-z]+$' } }, type: 'object', propertyNames: { $ref: '#/$defs/name' } }, { ok: 1, 'NO': 2 });
pack('r2.patternProps-order', { type: 'object', patternProperties: { '^b': { type: 'number' }, '^a': { type: 'number' } } }, { a1: 'x', b1: 'y', a2: 'z', 1: 'q' });
pack('r2.additional-with-patterns-errors', { type: 'object', properties: { id: { type: 'integer' } }, patternProperties: { '^x-': { type: 'string' } }, additionalProperties: { type: 'boolean' } }, { id: 'a', 'x-1': 2, other: 'no', 5: 'z' });
pack('r2.nested-refs-paths', { $defs: { a: { type: 'object', properties: { b: { $ref: '#/$defs/b' } } }, b: { type: 'object', properties: { c: { $ref: '#/$defs/c' } } }, c: { type: 'string', maxLength: 1 } }, type: 'object', properties: { x: { $ref: '#/$defs/a' } } }, { x: { b: { c: 'long' } } });
mcp('r2.nested-refs-paths', { $defs: { a: { type: 'object', properties: { b: { $ref: '#/$defs/b' } } }, b: { type: 'object', properties: { c: { $ref: '#/$defs/c' } } }, c: { type: 'string', maxLength: 1 } }, type: 'object', properties: { x: { $ref: '#/$defs/a' } } }, { x: { b: { c: 'long' } } });
mcp('r2.ref-array-pointer', { allOf: [{ type: 'string' }], properties: { a: { $ref: '#/allOf/0' } } }, { a: 1 });
mcp('r2.d19-recursive-nested-id', { $schema: D19, $id: 'https://example.com/outer', $recursiveAnchor: true, type: 'object', properties: { inner: { $id: 'https://example.com/inner', type: 'object', properties: { again: { $recursiveRef: '#' }, n: { type: 'integer' } } }, m: { type: 'string' } } }, { inner: { again: { m: 1, n: 'x' } } });
mcp('r2.d7-uniqueItems-tuple', { $schema: D7, type: 'array', items: [{ type: 'integer' }, { type: 'integer' }], uniqueItems: true }, [1, 1], [1, 2, 1]);
mcp('r2.d7-exclusive-bool', { $schema: D7, type: 'number', exclusiveMinimum: false }, 1);
mcp('r2.d6-exclusive-number', { $schema: D6, type: 'number', exclusiveMinimum: 1, exclusiveMaximum: 3 }, 1, 3, 2);
mcp('r2.d7-definitions-meta', { $schema: D7, definitions: { a: { type: 'strin' } } }, 1);
mcp('r2.d19-meta-nested', { $schema: D19, type: 'array', items: [{ minItems: -1 }] }, []);
mcp('r2.d20-meta-deps', { dependentSchemas: { a: 5 } }, {});
mcp('r2.nested-schema-keyword', { type: 'object', properties: { a: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'string' } } }, { a: 1 });
pack('r2.nested-schema-keyword', { type: 'object', properties: { a: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'string' } } }, { a: 1 });
pack('r2.format-date-time-offsets', { type: 'string', format: 'date-time' }, '2024-01-01T00:00:00+23:59', '2024-01-01T00:00:00+24:00', '2024-01-01T00:00:00-00:60', '2024-01-01T23:59:60+00:00', '2024-01-01T00:59:60+01:00', '2024-02-29T12:00:00.000000001Z');
pack('r2.format-time-leap', { type: 'string', format: 'time' }, '23:59:60Z', '23:59:60.999Z', '23:59:61Z', '00:29:60+00:30', '12:00:60Z');
pack('r2.format-email-edge', { type: 'string', format: 'email' }, 'a@b.c', 'a@1.2', 'a@b.c-d', 'x@xn--p1ai.xn--p1ai', 'a b@c.de', '"a"@b.co', 'a@b_c.de');
pack('r2.format-uri-edge', { type: 'string', format: 'uri' }, 'a:b', 'a:', 'https://', 'https://a', 'http://user@host:80/p?q#f', 'http://[fe80::1]/', 'http://[v1.x]/', 'http://%41/', 'tel:+1-555', 'a:/b/../c', ':x');
pack('r2.format-hostname-unicode', { type: 'string', format: 'hostname' }, 'bücher.de', 'xn--bcher-kva.de', 'a'.repeat(63), 'a-'.repeat(31) + 'a');
pack('r2.nullable-union', { type: ['string', 'number'], nullable: true }, null, true);
pack('r2.type-message-union-null', { type: ['null', 'integer'] }, 'x', 1.5);
pack('r2.enum-single', { enum: [null] }, 0, null);
pack('r2.required-order-with-props', { type: 'object', properties: { b: { type: 'string' }, a: { type: 'string' } }, required: ['b', 'a'], additionalProperties: false }, { c: 1, a: 1 });
pack('r2.deep-error-path', { type: 'array', items: { type: 'array', items: { type: 'object', properties: { 'k/1': { type: 'array', items: { type: 'string' } } } } } }, [[{ 'k/1': ['a', 2] }], [{}, { 'k/1': [3] }]]);
packIn('r2.defaults-nested-array-tuple', { type: 'object', properties: { list: { type: 'array', default: [{}], items: { type: 'object', properties: { n: { type: 'integer', default: 0 } } } } } }, {}, { list: [{ n: 1 }, {}] });
packIn('r2.defaults-then-required', { type: 'object', properties: { k: { type: 'string' }, port: { type: 'integer' } }, if: { properties: { k: { const: 'a' } }, required: ['k'] }, then: { properties: { port: { default: 1 } } }, required: ['port'] }, { k: 'a' }, { k: 'b' });
packIn('r2.defaults-dependentSchemas-chain', { type: 'object', properties: { a: true, b: true }, dependentSchemas: { a: { properties: { b: { default: 1 } } }, b: { properties: { c: { default: 2 } } } } }, { a: 0 });
packIn('r2.defaults-key-order-numeric', { type: 'object', properties: { z: { default: 1 }, 10: { default: 2 }, 2: { default: 3 } } }, { y: 0, 5: 0 });
packIn('r2.defaults-in-allOf-ref', { $defs: { d: { properties: { q: { default: 'v' } } } }, type: 'object', allOf: [{ $ref: '#/$defs/d' }] }, {});
mcpIn('r2.defaults-d19-dependentSchemas', { $schema: D19, type: 'object', dependentSchemas: { a: { properties: { b: { default: true } } } } }, { a: 1 }, {});
mcpIn('r2.defaults-d7-if', { $schema: D7, type: 'object', if: { required: ['a'] }, then: { properties: { b: { default: 1 } } } }, { a: 1 });
mcpIn('r2.defaults-d7-dependencies', { $schema: D7, type: 'object', dependencies: { a: { properties: { b: { default: 1 } } } } }, { a: 1 });

// ---- round 3: strict messages through references and ids --------------------------------------
pack('r3.strict-types-inlined-ref', { type: 'object', properties: { a: { $ref: '#/$defs/n' } }, $defs: { n: { minimum: 1 } } }, {});
pack('r3.strict-types-inlined-id', { $id: 'https://x.org/s.json', type: 'object', properties: { a: { $ref: 'a.json' } }, $defs: { a: { $id: 'a.json', type: 'object', properties: { b: { minimum: 1 } } } } }, {});
pack('r3.strict-types-function-id', { $id: 'https://x.org/s.json', type: 'object', properties: { a: { $ref: 'a.json' } }, $defs: { a: { $id: 'a.json', type: 'object', properties: { b: { minimum: 1 }, c: { $ref: '#' } } } } }, {});
pack('r3.unknown-format-inlined', { type: 'object', properties: { a: { $ref: '#/$defs/f' } }, $defs: { f: { type: 'string', format: 'zip' } } }, {});
pack('r3.required-inlined', { type: 'object', properties: { a: { $ref: '#/$defs/r' } }, $defs: { r: { type: 'object', required: ['x'] } } }, {});
pack('r3.required-with-id', { $id: 'https://x.org/r.json', type: 'object', required: ['x'] }, {});
pack('r3.tuple-inlined', { type: 'object', properties: { a: { $ref: '#/$defs/t' } }, $defs: { t: { type: 'array', prefixItems: [true] } } }, {});
pack('r3.pattern-bad-inlined', { type: 'object', properties: { a: { $ref: '#/$defs/p' } }, $defs: { p: { type: 'string', pattern: '(' } } }, {});
pack('r3.context-types-inlined', { type: 'object', properties: { a: { type: 'string', allOf: [{ $ref: '#/$defs/n' }] } }, $defs: { n: { type: 'number' } } }, { a: 'x' });
pack('r3.default-in-inlined-anyOf', { type: 'object', anyOf: [{ $ref: '#/$defs/d' }] , $defs: { d: { properties: { a: { default: 1 } } } } }, {});
packIn('r3.default-in-inlined-anyOf', { type: 'object', anyOf: [{ $ref: '#/$defs/d' }], $defs: { d: { properties: { a: { default: 1 } } } } }, {});
packIn('r3.default-in-function-anyOf', { type: 'object', anyOf: [{ $ref: '#/$defs/d' }], $defs: { d: { properties: { a: { default: 1 }, s: { $ref: '#/$defs/d' } } } } }, {});
pack('r3.ref-sibling-strict-types', { $defs: { s: { type: 'string' } }, $ref: '#/$defs/s', minLength: 1 }, 'a');
pack('r3.ref-in-properties-default', { type: 'object', properties: { a: { $ref: '#/$defs/x', default: 1 } }, $defs: { x: { type: 'integer' } } }, {});
mcp('r3.mcp-bad-format-limit', { type: 'string', format: 'email', formatMaximum: 'x' }, 'a');
mcp('r3.mcp-format-limit-date', { type: 'string', format: 'date', formatMaximum: '2020-01-01' }, '2021-01-01', 'x');
mcp('r3.mcp-dynamic-2019', { $schema: D19, $dynamicAnchor: 'a', type: 'object', properties: { k: { $dynamicRef: '#a' }, v: { type: 'string' } } }, { k: { v: 1 } });
mcp('r3.mcp-recursiveRef-2020', { $recursiveAnchor: true, type: 'object', properties: { k: { $recursiveRef: '#' }, v: { type: 'string' } } }, { k: { v: 1 } });

const outDir = join(repoRoot, 'crates', 'kindgi-schema', 'tests', 'vectors');
const ids = new Set();
for (const c of cases) {
  if (ids.has(c.id)) throw new Error(`duplicate id ${c.id}`);
  ids.add(c.id);
}
const corpusText = JSON.stringify(cases, null, 2) + '\n';
// Ajv answers the cases as read back from JSON (what the Rust test reads), not the literals.
const oracleText = JSON.stringify(JSON.parse(corpusText).map(answer), null, 2) + '\n';
const corpusPath = join(outDir, 'extra-corpus.json');
const oraclePath = join(outDir, 'extra-oracle.json');
if (process.argv.includes('--check')) {
  const same = readFileSync(corpusPath, 'utf8') === corpusText && readFileSync(oraclePath, 'utf8') === oracleText;
  console.error(same ? `extra corpus up to date (${cases.length} cases)` : 'extra corpus/oracle differ from a fresh run');
  process.exit(same ? 0 : 1);
}
writeFileSync(corpusPath, corpusText);
writeFileSync(oraclePath, oracleText);
console.error(`wrote ${cases.length} cases to ${corpusPath} and ${oraclePath}`);
