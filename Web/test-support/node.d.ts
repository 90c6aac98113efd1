// The small part of Node's own modules that these tests use, typed by hand: there is no
// @types/node here (no npm registry), and tsc checks the tests too.

declare module 'node:test' {
  type TestFunction = (context: TestContext) => void | Promise<void>;
  interface TestContext {
    test(name: string, fn: TestFunction): Promise<void>;
  }
  export function test(name: string, fn: TestFunction): Promise<void>;
}

declare module 'node:assert/strict' {
  type ErrorPredicate = RegExp | ((error: unknown) => boolean) | (new (...args: any[]) => Error) | object;
  interface Assert {
    (value: unknown, message?: string): asserts value;
    ok(value: unknown, message?: string): asserts value;
    equal(actual: unknown, expected: unknown, message?: string): void;
    notEqual(actual: unknown, expected: unknown, message?: string): void;
    deepEqual(actual: unknown, expected: unknown, message?: string): void;
    notDeepEqual(actual: unknown, expected: unknown, message?: string): void;
    match(value: string, pattern: RegExp, message?: string): void;
    throws(fn: () => unknown, expected?: ErrorPredicate, message?: string): void;
    doesNotThrow(fn: () => unknown, message?: string): void;
    rejects(promise: Promise<unknown> | (() => Promise<unknown>), expected?: ErrorPredicate, message?: string): Promise<void>;
  }
  const assert: Assert;
  export default assert;
}

declare module 'node:crypto' {
  interface CipherLike {
    update(data: Uint8Array): Uint8Array;
    final(): Uint8Array;
    setAAD(aad: Uint8Array): this;
    getAuthTag(): Uint8Array;
    setAuthTag(tag: Uint8Array): this;
  }
  interface HashLike {
    update(data: Uint8Array): HashLike;
    digest(): Uint8Array;
  }
  export function createCipheriv(algorithm: string, key: Uint8Array, iv: Uint8Array, options?: { authTagLength?: number }): CipherLike;
  export function createDecipheriv(algorithm: string, key: Uint8Array, iv: Uint8Array, options?: { authTagLength?: number }): CipherLike;
  export function createHash(algorithm: string): HashLike;
  export function createHmac(algorithm: string, key: Uint8Array): HashLike;
  export function hkdfSync(digest: string, ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, length: number): ArrayBuffer;
}

declare module 'node:fs' {
  export function readFileSync(path: URL | string, encoding: 'utf8'): string;
  export function existsSync(path: URL | string): boolean;
}

declare const process: { env: Record<string, string | undefined>; argv: string[] };
