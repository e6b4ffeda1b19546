import type { Context } from 'koa';
import type { VNode } from 'preact';
import type { AppDeps } from '../app-deps.ts';
import type { FormState } from '../console/components/Form.tsx';
import type { FormValues } from '../console/http/form.ts';
import type { PortalViewer } from './viewer.ts';

export interface PortalPageInput {
  deps: AppDeps;
  ctx: Context;
  params: Record<string, string>;
  query: Record<string, string>;
  viewer: PortalViewer;
  notice?: string | undefined;
  /** A refused form, shown again with the service's reason beside its fields. */
  state?: FormState;
}

/** A portal page: calls the portal's services with the signed-in customer and renders a component. */
export interface PortalPage {
  kind: 'page';
  path: string;
  render(input: PortalPageInput): Promise<VNode>;
}

/** What an action did: redirect (303) with a confirmation, or answer a file. */
export type PortalDone =
  | { redirect: string; notice: string }
  | { file: { filename: string; contentType: string; body: string } };

/** A form post: one portal service; a refusal renders `page` again with the error beside the form (C-6). */
export interface PortalAction {
  kind: 'action';
  path: string;
  form: string;
  page: PortalPage;
  run(input: {
    deps: AppDeps;
    ctx: Context;
    params: Record<string, string>;
    form: FormValues;
    viewer: PortalViewer;
  }): Promise<PortalDone>;
}

export const portalPage = (page: Omit<PortalPage, 'kind'>): PortalPage => ({ kind: 'page', ...page });
export const portalAction = (action: Omit<PortalAction, 'kind'>): PortalAction => ({ kind: 'action', ...action });
