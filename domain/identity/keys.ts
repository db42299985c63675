import { deriveKey } from '../../common/secrets';
import { sessionKeys, type SessionKeys } from './sessions';

/** The per-purpose keys of the identity code, each derived from SECRET_KEY. */
export interface DerivedKeys {
  /** access-token signing and refresh-token fingerprints */
  session: SessionKeys;
  /** API-key secret fingerprints */
  apiKey: Buffer;
  /** fingerprints of e-mailed tokens, Google exchange codes and pending Google states */
  oneTimeToken: Buffer;
  /** fingerprints of the addresses failed sign-ins are counted for (no address is stored in clear) */
  signInAccount: Buffer;
}

const derived = new Map<string, DerivedKeys>();

/** The derived keys of this secret, derived once per process (keyed by the secret, not the config object). */
export function keysOf(config: { secretKey: string }): DerivedKeys {
  let keys = derived.get(config.secretKey);
  if (!keys) {
    keys = {
      session: sessionKeys(config.secretKey),
      apiKey: deriveKey(config.secretKey, 'api-key'),
      oneTimeToken: deriveKey(config.secretKey, 'one-time-token'),
      signInAccount: deriveKey(config.secretKey, 'sign-in-account'),
    };
    derived.set(config.secretKey, keys);
  }
  return keys;
}
