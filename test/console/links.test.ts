/**
 * Every kind of html_url the API hands out (flow, trail, attestation, artifact, snapshot, and the
 * ones inside snapshots and search results) opens its page in the console, as it is.
 */
import { expect, it } from 'vitest';
import { describeConsole } from './pages.js';

describeConsole('the API html_url links', (t) => {
  it('open their pages in the console', async () => {
    const page = await t.page();
    const visits: Array<{ url: string; heading: string | RegExp }> = [];
    const base = (url: string) => expect(url.startsWith(`${t.baseUrl}/${t.org}/`), url).toBe(true);

    const flows: Array<{ name: string; html_url: string }> = await t.api(`/flows/${t.org}`);
    expect(flows.map((f) => f.name).sort()).toEqual(['cli', 'cli-release', 'frontend', 'payments']);
    for (const f of flows) {
      visits.push({ url: f.html_url, heading: `Flow ${f.name}` });
    }

    const trails = await t.api(`/trails/${t.org}?per_page=100&flow=payments`);
    const latest = trails.data[0];
    visits.push({ url: latest.html_url, heading: `Trail ${latest.name}` });
    const trail = await t.api(`/trails/${t.org}/cli-release/v0.4.0`);
    visits.push({ url: trail.html_url, heading: 'Trail v0.4.0' });

    const attestations = await t.api(`/attestations/${t.org}/payments/trail/payments-3/dependency-scan`);
    expect(attestations.length).toBeGreaterThan(0);
    visits.push({ url: attestations[0].html_url, heading: 'Trail payments-3' });

    const fp: string = trail.compliance_status.artifacts_statuses['linux-amd64'].artifact_fingerprint;
    const artifact = await t.api(`/artifacts/${t.org}/cli-release/fingerprint/${fp}`);
    visits.push({ url: artifact.html_url, heading: `Artifact ${artifact.filename}` });

    for (const env of ['dev', 'staging', 'prod']) {
      const snapshot = await t.api(`/snapshots/${t.org}/${env}/-1`);
      visits.push({ url: snapshot.html_url, heading: `Snapshot ${snapshot.index} of ${env}` });
      if (env === 'prod') {
        const running = snapshot.artifacts.find((a: any) => a.flows.length > 0);
        visits.push({ url: running.html_url, heading: `Artifact ${running.name}` });
        visits.push({ url: running.flows[0].html_url, heading: `Artifact ${running.name}` });
        visits.push({ url: running.flows[0].flow_html_url, heading: `Flow ${running.flows[0].flow_name}` });
      }
    }

    const found = await t.api(`/search/${t.org}/sha/${fp.slice(0, 10)}`);
    visits.push({ url: found.artifacts[0].html_url, heading: `Artifact ${found.artifacts[0].name}` });

    for (const { url, heading } of visits) {
      base(url);
      await page.goto(url);
      await page
        .getByRole('heading', { name: heading, level: 1 })
        .waitFor()
        .catch(async (err: unknown) => {
          throw new Error(`${url} shows ${await page.getByRole('main').innerText()}`, { cause: err });
        });
      await page
        .getByText(/Loading/)
        .first()
        .waitFor({ state: 'hidden' });
      expect(await page.getByRole('alert').count(), `an error on ${url}`).toBe(0);
      expect(await page.getByRole('heading', { name: 'Page not found' }).count(), url).toBe(0);
    }

    // an attestation's link opens its trail scrolled to that attestation, whichever of the trail
    // and its attestations arrives first
    const target = page.locator(`[id="attestation-${attestations[0].attestation_id}"]`);
    const inView = async () => {
      await target.getByRole('heading', { name: /^dependency-scan / }).waitFor();
      await expect
        .poll(async () => {
          const box = await target.boundingBox();
          return box !== null && box.y >= 0 && box.y + Math.min(box.height, 100) <= 900;
        })
        .toBe(true);
    };
    await page.goto(attestations[0].html_url);
    await inView();
    for (const late of [
      /\/api\/v2\/trails\/[^/]+\/payments\/payments-3$/,
      /\/api\/v2\/attestations\/[^/?]+\?/,
    ]) {
      await page.route(late, async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 400));
        await route.continue();
      });
      await page.goto(attestations[0].html_url);
      await inView();
      await page.unroute(late);
    }
  });
});
