/**
 * The slice of jsdom's API that sanitize-svg.ts uses. Not @types/jsdom: it references the
 * browser's DOM library, whose globals (Blob, Headers, …) would replace Node's in the
 * whole program's types.
 */
declare module "jsdom" {
  export class JSDOM {
    constructor(html?: string);
    readonly window: unknown;
  }
}
