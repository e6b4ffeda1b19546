import { z } from 'zod';
import type { Config } from '../config.ts';
import { percentString } from '../percent.ts';
import { EMAIL_TYPES } from '../email-types.ts';

/** P-7: what a customer may do in the portal; a feature left out shows no control and its POST is 403. */
export const PORTAL_FEATURES = ['cancel', 'change_plan', 'billing_details', 'deactivate_devices'] as const;
export type PortalFeature = (typeof PORTAL_FEATURES)[number];

interface SettingDef {
  schema: z.ZodType;
  default: unknown;
  /** Environment variable that overrides the stored row (D-12); config.ts parses it with the rest. */
  env?: keyof Config;
  /** Write-only: read back as "********". */
  secret?: boolean;
  description: string;
}

/** Every setting the service knows, with its schema and default. Unknown keys are refused. */
export const settingDefinitions = {
  // Plain numbers, not coerced: a JSON `true` or `[5]` must not slip in as 1 or 5. The environment
  // override is a string; the service turns it into JSON before this schema sees it.
  'auth.session_expiry_days': {
    schema: z.number().int().min(1).max(365),
    default: 7,
    env: 'AUTH_SESSION_EXPIRY_DAYS',
    description: 'Admin session lifetime in days.',
  },
  'auth.provider': {
    schema: z.enum(['local', 'idp']),
    default: 'local',
    description: '`idp` logs in through the OpenID Connect identity provider (needs its realm URL and client id).',
  },
  'auth.idp.realm_url': {
    schema: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).or(z.literal('')),
    default: '',
    description: 'Identity provider realm URL (http or https).',
  },
  'auth.idp.client_id': { schema: z.string().max(200), default: '', description: 'Identity provider client id.' },
  'auth.idp.client_secret': {
    schema: z.string().max(500),
    default: '',
    secret: true,
    description: 'Identity provider client secret (write-only).',
  },
  'auth.idp.admin_role': {
    schema: z.string().min(1, 'must not be empty').max(200),
    default: 'admin',
    description: 'Realm role that makes a user an admin.',
  },
  'auth.login_max_failures': {
    schema: z.number().int().min(1).max(1000),
    default: 10,
    description:
      'Failed logins in the window that refuse an IP, and an account to an IP that keeps guessing it; ' +
      'as many IPs failing for one account make new IPs wait (growing delays).',
  },
  'auth.login_window_minutes': {
    schema: z.number().int().min(1).max(1440),
    default: 15,
    description: 'Window for counting failed logins.',
  },
  'licenses.key_prefix': {
    schema: z.string().regex(/^[A-Z0-9]{1,10}$/, 'must be 1-10 upper-case letters or digits'),
    default: 'LIC',
    env: 'LICENSE_KEY_PREFIX',
    description: 'Prefix of generated license keys.',
  },
  'licenses.file_ttl_days': {
    schema: z.number().int().min(1).max(365),
    default: 30,
    description: 'How long a license file checked out without ttlSeconds stays valid offline, in days.',
  },
  'licenses.rate_limit_per_minute': {
    schema: z.number().int().min(1).max(1_000_000),
    default: 600,
    description: 'Public license requests per minute per IP.',
  },
  'billing.default_tax_rate': {
    schema: percentString,
    default: '0',
    description: 'Tax rate in percent applied when an invoice names none.',
  },
  'billing.default_tax_rate_ids': {
    schema: z.array(z.uuid({ error: 'must be a UUID' })).max(5, 'must name at most 5 tax rates'),
    default: [],
    description:
      'Tax rates (ids) of invoices whose plan and customer name none (T-2); archived or unknown ids apply to nothing.',
  },
  'billing.payment_terms_days': {
    schema: z.number().int().min(0).max(365),
    default: 14,
    description: 'Days from issue to due date.',
  },
  'billing.dunning_schedule_days': {
    schema: z
      .array(z.number().int().min(1).max(90))
      .min(1)
      .max(20)
      // The retries happen in the order of their days: [3, 1] or [1, 1] is a typo, not a schedule.
      .refine(
        (days) => days.every((day, i) => i === 0 || day > days[i - 1]!),
        'must list days in increasing order, each once',
      ),
    default: [1, 3, 5, 7],
    description: 'Days after the first failure at which charges are retried, in increasing order, each once.',
  },
  'billing.dunning_final_action': {
    schema: z.enum(['cancel', 'leave_past_due']),
    default: 'cancel',
    description: 'What happens after the last failed retry.',
  },
  'billing.test_clocks_enabled': {
    schema: z.boolean(),
    default: true,
    description: 'Whether test clocks may be created (TC-6); false refuses creation with test_clocks_disabled.',
  },
  'company.name': { schema: z.string().max(200), default: 'Your Company', description: 'Seller name on invoices.' },
  'company.address': { schema: z.string().max(1000), default: '', description: 'Seller address on invoices.' },
  'company.email': { schema: z.string().max(320), default: '', description: 'Seller contact email on invoices.' },
  'company.tax_id': { schema: z.string().max(100), default: '', description: 'Seller tax id on invoices.' },
  'emails.enabled_types': {
    schema: z
      .array(z.enum(EMAIL_TYPES, { error: `must be one of ${EMAIL_TYPES.join(', ')}` }))
      .max(EMAIL_TYPES.length)
      .refine((types) => new Set(types).size === types.length, 'must list each type once'),
    default: [...EMAIL_TYPES],
    description: 'Email types sent to customers (M-4); the others are kept as skipped. portal.code is always sent.',
  },
  'invoices.hosted_rate_limit_per_minute': {
    schema: z.number().int().min(1).max(1_000_000),
    default: 300,
    description:
      'Hosted invoice page requests (/i/...) per minute per IP, as the public license endpoints are limited.',
  },
  'portal.features': {
    schema: z
      .array(z.enum(PORTAL_FEATURES, { error: `must be one of ${PORTAL_FEATURES.join(', ')}` }))
      .max(PORTAL_FEATURES.length)
      .refine((features) => new Set(features).size === features.length, 'must list each feature once')
      .meta({ uniqueItems: true }),
    default: [...PORTAL_FEATURES],
    description:
      'What customers may do in the portal (P-7): cancel, change_plan, billing_details, deactivate_devices. ' +
      'A feature left out shows no control and its form is refused (403).',
  },
  'emails.trial_ending_days': {
    schema: z.number().int().min(1).max(60),
    default: 3,
    description: 'Days before a trial ends that the trial.ending email is sent.',
  },
} satisfies Record<string, SettingDef>;

export type SettingKey = keyof typeof settingDefinitions;
export type SettingValue<K extends SettingKey> = z.output<(typeof settingDefinitions)[K]['schema']>;

/** The environment variable that overrides setting K, or never when none does. */
export type SettingEnvVar<K extends SettingKey = SettingKey> = K extends SettingKey
  ? (typeof settingDefinitions)[K] extends { env: infer E extends keyof Config }
    ? E
    : never
  : never;

export const SECRET_MASK = '********';

export function isSettingKey(key: string): key is SettingKey {
  return Object.hasOwn(settingDefinitions, key);
}

export function settingDef(key: SettingKey): SettingDef {
  return settingDefinitions[key];
}
