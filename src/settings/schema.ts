import { z } from 'zod';
import { type SettingKey, settingDefinitions } from './definitions.ts';

const keys = Object.keys(settingDefinitions) as SettingKey[];
/** Each setting's value schema, with its description, from definitions.ts (the one list of settings). */
const described = (key: SettingKey) => {
  const def = settingDefinitions[key];
  return def.schema.meta({ description: def.description });
};

/**
 * PUT /api/settings: only the keys given change, each by its own schema; a key that is not a setting is refused
 * (`unknown_setting`, D-12), so the document lists the real keys (issue 33). The service checks them again for
 * the callers that do not come through a route.
 */
export const settingsBody = z.object(Object.fromEntries(keys.map((key) => [key, described(key).optional()]))).meta({
  examples: [{ 'company.name': 'Acme Billing Ltd', 'billing.payment_terms_days': 30 }],
});

/** Every setting, the write-only ones masked. */
export const settingsResponse = z.object(Object.fromEntries(keys.map((key) => [key, described(key)]))).meta({
  examples: [
    {
      'auth.session_expiry_days': 7,
      'auth.provider': 'local',
      'auth.idp.realm_url': '',
      'auth.idp.client_id': '',
      'auth.idp.client_secret': '********',
      'auth.idp.admin_role': 'admin',
      'auth.login_max_failures': 10,
      'auth.login_window_minutes': 15,
      'licenses.key_prefix': 'LIC',
      'licenses.file_ttl_days': 30,
      'licenses.rate_limit_per_minute': 600,
      'billing.default_tax_rate': '0',
      'billing.default_tax_rate_ids': [],
      'billing.payment_terms_days': 30,
      'billing.dunning_schedule_days': [1, 3, 5, 7],
      'billing.dunning_final_action': 'cancel',
      'billing.test_clocks_enabled': true,
      'company.name': 'Acme Billing Ltd',
      'company.address': '1 Main Street\nSpringfield, IL 62701\nUS',
      'company.email': 'billing@acme.example',
      'company.tax_id': 'US987654321',
      'invoices.hosted_rate_limit_per_minute': 300,
      'emails.enabled_types': ['invoice.issued', 'payment.receipt', 'payment.failed', 'dunning.final', 'portal.code'],
      'emails.trial_ending_days': 3,
      'portal.features': ['cancel', 'change_plan', 'billing_details', 'deactivate_devices'],
    },
  ],
});
