/**
 * The slice of colorjs.io's tree-shakable API that the branding contrast check and the login
 * pages' palette use. Its own declarations reference the browser's DOM library, whose
 * globals (Blob, Headers, …) would replace Node's in the whole program's types; tsconfig.json
 * maps "colorjs.io/fn" here instead (as src/images/jsdom.d.ts does for jsdom).
 */
declare module "colorjs.io/fn" {
  export namespace ColorTypes {
    interface PlainColorObject {
      space: ColorSpace;
      coords: [number | null, number | null, number | null];
      alpha: number | null;
    }
    type ColorObject = PlainColorObject;
    type ColorTypes = PlainColorObject | string;
  }
  export type ColorTypes = ColorTypes.ColorTypes;
  export class ColorSpace {
    static register(space: ColorSpace): ColorSpace;
    readonly id: string;
  }
  export const sRGB: ColorSpace;
  export const XYZ_D65: ColorSpace;
  export function parse(color: string): ColorTypes.PlainColorObject;
  export function contrastWCAG21(a: ColorTypes, b: ColorTypes): number;
  export function mix(
    a: ColorTypes,
    b: ColorTypes,
    p?: number,
    options?: { space?: string | ColorSpace; outputSpace?: string | ColorSpace },
  ): ColorTypes.PlainColorObject;
  export function serialize(color: ColorTypes, options?: { format?: string; inGamut?: boolean; precision?: number }): string;
}
