import type { Context } from 'koa';
import type { VNode } from 'preact';
import type { z } from 'zod';
import type { AppDeps } from '../../app-deps.ts';
import type { Actor } from '../../actor.ts';
import type { Viewer } from '../components/Layout.tsx';
import type { FormState } from '../components/Form.tsx';
import type { FormValues } from './form.ts';

export interface ConsoleViewer extends Viewer {
  userId: string;
}

export interface PageInput<Q> {
  deps: AppDeps;
  ctx: Context;
  params: Record<string, string>;
  query: Q;
  viewer: ConsoleViewer;
  /** A confirmation to show, from the redirect after a successful action. */
  notice?: string;
  /** Set when a refused action re-renders this page (C-6). */
  state?: FormState;
}

/** A console page: parses its query with zod and renders a component with the domain services' data. */
export interface ConsolePage<S extends z.ZodType = z.ZodType> {
  kind: 'page';
  path: string;
  query?: S;
  render(input: PageInput<z.output<S>>): Promise<VNode>;
}

/** A streamed export (C-4 CSV): the list's filters, every row. */
export interface ConsoleExport<S extends z.ZodType = z.ZodType> {
  kind: 'export';
  path: string;
  filename: string;
  query?: S;
  rows(input: { deps: AppDeps; query: z.output<S> }): AsyncIterable<readonly unknown[]>;
  header: readonly string[];
}

export interface ActionInput {
  deps: AppDeps;
  ctx: Context;
  params: Record<string, string>;
  form: FormValues;
  viewer: ConsoleViewer;
  /** The signed-in admin with the request's id and IP, for the audit log (C-11). */
  actor: Actor;
}

/**
 * What an action did: where to redirect (303) with which confirmation; or, for a form that is only being
 * filled in (an "Add a line" button), nothing at all: the page shows the form `again` with these values.
 */
export type ActionDone = { redirect: string; notice: string } | { again: FormValues; confirming?: string };

/**
 * An action that cannot be undone asks first (issue 34): without `confirm=yes` its form comes back open with
 * `text` and a confirm button; undefined once confirmed.
 */
export function askFirst(form: FormValues, text: string): ActionDone | undefined {
  return form.confirm === 'yes' ? undefined : { again: form, confirming: text };
}

/**
 * A form post (C-6): runs one domain service and answers where to redirect (303) with which
 * confirmation; when the service refuses, `page` is rendered again with the error and what was typed.
 */
export interface ConsoleAction {
  kind: 'action';
  path: string;
  /** The form's name on the page (the `_form` field), for the page to show the error beside it. */
  form: string;
  run(input: ActionInput): Promise<ActionDone>;
  /** The page the form lives on: rendered again when `run` is refused. */
  page: ConsolePage;
  /** The form moves money: its one-time token makes a resubmit answer the first result (C-13). */
  oneTime?: boolean;
}

export type ConsoleRoute = ConsolePage | ConsoleExport | ConsoleAction;

export const definePage = <S extends z.ZodType>(page: Omit<ConsolePage<S>, 'kind'>): ConsolePage<S> => ({
  kind: 'page',
  ...page,
});
export const defineExport = <S extends z.ZodType>(e: Omit<ConsoleExport<S>, 'kind'>): ConsoleExport<S> => ({
  kind: 'export',
  ...e,
});
export const defineAction = (a: Omit<ConsoleAction, 'kind'>): ConsoleAction => ({ kind: 'action', ...a });
