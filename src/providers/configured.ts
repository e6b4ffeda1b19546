/**
 * Which payment providers this installation is set up for (D-92). A provider whose secret is unset is a
 * set-up state, not a provider failure: what needs it answers 503 provider_not_configured naming the
 * variable to set (a provider retries a webhook answered 503 later), and start-up warns once per provider.
 */
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';

export type ProviderName = 'provider_a' | 'provider_b' | 'provider_c';

/** The variables each provider needs: its API secret (checkout, refunds, auto-charge) and its webhook secret. */
export const PROVIDER_VARIABLES = {
  provider_a: { api: 'PROVIDER_A_SECRET_KEY', webhook: 'PROVIDER_A_WEBHOOK_SECRET' },
  provider_b: { api: 'PROVIDER_B_SECRET_KEY', webhook: 'PROVIDER_B_CALLBACK_TOKEN' },
  provider_c: { webhook: 'PROVIDER_C_WEBHOOK_SECRET' },
} as const satisfies Record<ProviderName, { api?: SecretVariable; webhook: SecretVariable }>;

type ProviderUse = 'api' | 'webhook';
type SecretVariable =
  | 'PROVIDER_A_SECRET_KEY'
  | 'PROVIDER_A_WEBHOOK_SECRET'
  | 'PROVIDER_B_SECRET_KEY'
  | 'PROVIDER_B_CALLBACK_TOKEN'
  | 'PROVIDER_C_WEBHOOK_SECRET';
/** The secrets as configuration holds them; a caller may hand over only the ones it uses. */
export type ProviderSecretConfig = Partial<Pick<Config, SecretVariable>>;

/** A comma-separated secret setting as its secrets, blanks dropped (several at once while rotating). */
export function secretList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function variableOf(provider: ProviderName, use: ProviderUse): SecretVariable | undefined {
  return (PROVIDER_VARIABLES[provider] as { api?: SecretVariable; webhook: SecretVariable })[use];
}

const isSet = (config: ProviderSecretConfig, variable: SecretVariable) => secretList(config[variable]).length > 0;

/** Throws 503 provider_not_configured, naming the variable, unless `provider` is set up for `use`. */
export function assertProviderConfigured(config: ProviderSecretConfig, provider: ProviderName, use: ProviderUse): void {
  const variable = variableOf(provider, use);
  if (!variable || isSet(config, variable)) return;
  throw new AppError('provider_not_configured', `${provider} is not configured: set ${variable}`, {
    details: [{ path: variable, message: 'is not set' }],
  });
}

/** Each provider with a variable unset, and those variables. */
export function unconfiguredProviders(
  config: ProviderSecretConfig,
): { provider: ProviderName; missing: SecretVariable[] }[] {
  return (Object.keys(PROVIDER_VARIABLES) as ProviderName[])
    .map((provider) => ({
      provider,
      missing: (Object.values(PROVIDER_VARIABLES[provider]) as SecretVariable[]).filter((v) => !isSet(config, v)),
    }))
    .filter(({ missing }) => missing.length > 0);
}

/** Start-up: one warning per provider that is not fully set up, naming what to set. */
export function warnUnconfiguredProviders(config: ProviderSecretConfig, logger: Pick<Logger, 'warn'>): void {
  for (const { provider, missing } of unconfiguredProviders(config)) {
    logger.warn(
      { provider, missing },
      `${provider} is not configured (${missing.join(', ')} unset): what needs it answers 503 provider_not_configured`,
    );
  }
}
