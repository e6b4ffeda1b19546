import type { Context } from 'koa';
import { AppError } from '../../errors.ts';
import { BODY_LIMIT_BYTES, readLimited } from '../../http/body.ts';

/** A posted form: field names with brackets (`lineItems[0][quantity]`) become nested objects and arrays. */
export type FormValues = { [name: string]: string | FormValues | FormValues[] | string[] };

const MAX_FIELDS = 2000;

function setPath(into: Record<string, unknown>, path: string[], value: string): void {
  let node: Record<string, unknown> = into;
  for (const [i, key] of path.entries()) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') return;
    if (i === path.length - 1) {
      node[key] = value;
      return;
    }
    let next = node[key];
    if (typeof next !== 'object' || next === null) {
      next = /^\d+$/.test(path[i + 1]!) ? [] : {};
      node[key] = next;
    }
    node = next as Record<string, unknown>;
  }
}

/** Whether the body is what every console form posts (C-6), `application/x-www-form-urlencoded`. */
export function isFormBody(ctx: Context): boolean {
  return ctx.get('content-type').split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** Parses `application/x-www-form-urlencoded` (C-6); anything else is refused. */
export async function readForm(ctx: Context): Promise<FormValues> {
  if (!isFormBody(ctx))
    throw new AppError('unsupported_media_type', 'Forms must be posted as application/x-www-form-urlencoded');
  const raw = await readLimited(ctx, BODY_LIMIT_BYTES);
  const params = new URLSearchParams(raw.toString('utf8'));
  const values: Record<string, unknown> = Object.create(null);
  let count = 0;
  for (const [name, value] of params) {
    if (++count > MAX_FIELDS) throw new AppError('invalid_request', 'Too many form fields');
    const [head, ...rest] = name.split('[');
    const path = [head!, ...rest.map((part) => part.replace(/\]$/, ''))];
    setPath(values, path, value);
  }
  return values as FormValues;
}

/** A text field as the API would take it: trimmed, and absent when left empty. */
export function field(form: FormValues, name: string): string | undefined {
  const value = form[name];
  if (typeof value !== 'string') return undefined;
  return value.trim() === '' ? undefined : value;
}

/** A number field: absent when empty, else the number typed (NaN stays, so the schema names the field). */
export function numberField(form: FormValues, name: string): number | undefined {
  const text = field(form, name);
  return text === undefined ? undefined : Number(text);
}

/** A field as typed (the schema trims it and names an empty required one); absent when not posted. */
export function typedField(form: FormValues, name: string): string | undefined {
  const value = form[name];
  return typeof value === 'string' ? value : undefined;
}

/** The hidden field a list of checkboxes posts beside them, so that "none ticked" is told apart from "not shown". */
export const LIST_SHOWN = 'shown';

/**
 * A list of checkboxes named `name[0]`, `name[1]`, ... (only the ticked ones are posted): the ticked values, [] when
 * the list was shown (its `name[shown]` marker) with none ticked, absent when the form had no such list.
 */
export function listField(form: FormValues, name: string): string[] | undefined {
  const value = form[name];
  // A single `name=value` (a hand-written form, a script) is a list of one.
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value) && (typeof value !== 'object' || value === null)) return undefined;
  return Object.entries(value)
    .filter(([key, v]) => key !== LIST_SHOWN && typeof v === 'string')
    .map(([, v]) => v as string);
}
