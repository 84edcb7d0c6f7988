import type { Options } from "./options";

export const VERSION = "1.0";

/** Anything with an area. */
export interface Shape {
  area(): number;
  readonly name: string;
}

export type Point = { x: number; y: number };

export enum Color {
  Red,
  Green,
}

@sealed
export abstract class Base implements Shape {
  abstract area(): number;
  name = "base";

  constructor(protected readonly options: Options) {}

  describe(): string {
    return `${this.name}: ${this.area()}`;
  }
}

export namespace Geometry {
  export function distance(a: Point, b: Point): number {
    return Math.hypot(a.x - b.x, a.y - b.y);
  }
}

declare function external(value: string): void;

export default function main(): void {}

const square = (side: number): number => side * side;
