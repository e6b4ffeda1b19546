import { z } from 'zod';

/** GET and PUT /api/settings: settings by key; the service validates each key and value (definitions.ts). */
export const settingsObject = z.record(z.string(), z.unknown());

/** PUT /api/settings: only the keys given change. */
export const settingsBody = settingsObject.meta({
  examples: [{ 'company.name': 'Acme Billing Ltd', 'billing.payment_terms_days': 30 }],
});

/** Every setting, the write-only ones masked. */
export const settingsResponse = settingsObject.meta({
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
      'billing.payment_terms_days': 30,
      'billing.dunning_schedule_days': [1, 3, 5, 7],
      'billing.dunning_final_action': 'cancel',
      'company.name': 'Acme Billing Ltd',
      'company.address': '1 Main Street\nSpringfield, IL 62701\nUS',
      'company.email': 'billing@acme.example',
      'company.tax_id': 'US987654321',
    },
  ],
});
