/**
 * The operator reads a Secret for an Action only when the Secret opts in: the label
 * `verity.dev/allow-operator-read: "true"`, or its name in the chart's operator.secretNames.
 * Against the Kubernetes API server double over real HTTP, through the real client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kube, SecretMissingError, SecretNotAllowedError } from '../../services/operator/src/kube.js';
import { classify } from '../../services/operator/src/reconcile.js';
import { ApiServerDouble, SECRETS } from './api-server-double.js';

const NS = 'apps';
let double: ApiServerDouble;

beforeAll(async () => {
  double = await new ApiServerDouble().start();
  double.register(SECRETS);
  double.putSecret(
    NS,
    'labelled',
    { url: 'https://hooks.example.com/a' },
    {
      'verity.dev/allow-operator-read': 'true',
    },
  );
  double.putSecret(NS, 'listed', { url: 'https://hooks.example.com/b' });
  double.putSecret(NS, 'other-app-secret', { 'callback-url': 'https://internal.example.com/token' });
  double.putSecret(
    NS,
    'wrong-label',
    { url: 'https://hooks.example.com/c' },
    {
      'verity.dev/allow-operator-read': 'yes',
    },
  );
});
afterAll(async () => double?.close());

describe('Secrets an Action may reference', () => {
  it('reads a labelled Secret, and one named in operator.secretNames', async () => {
    const kube = new Kube(double.kubeConfig(), ['listed']);
    expect(await kube.secretValue(NS, 'labelled', 'url')).toBe('https://hooks.example.com/a');
    expect(await kube.secretValue(NS, 'listed', 'url')).toBe('https://hooks.example.com/b');
  });

  it('refuses any other Secret, with a reason that says how to open it', async () => {
    const kube = new Kube(double.kubeConfig(), ['listed']);
    for (const name of ['other-app-secret', 'wrong-label']) {
      const err = await kube.secretValue(NS, name, 'callback-url').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SecretNotAllowedError);
      expect(classify(err).message).toBe(
        `Secret ${NS}/${name} is not open to the operator: label it verity.dev/allow-operator-read: "true" or list it in the chart's operator.secretNames`,
      );
      expect(String((err as Error).message)).not.toContain('internal.example.com');
    }
    // Without a list, only labelled Secrets.
    const plain = new Kube(double.kubeConfig());
    await expect(plain.secretValue(NS, 'listed', 'url')).rejects.toBeInstanceOf(SecretMissingError);
  });
});
