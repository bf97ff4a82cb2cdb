import assert from "node:assert/strict";
import { SetupError } from "../../lib/common/errors.ts";
import { parseRunFlags } from "../../lib/flags/config.ts";
import { apiServerEnv, readCloudConfig } from "../../lib/controller/cloud.ts";
import { settingsFromConfig } from "../../lib/controller/settings.ts";

async function withFile(text: string, fn: (path: string) => void | Promise<void>): Promise<void> {
  const path = await Deno.makeTempFile({ prefix: "ic-cloud-config-" });
  try {
    await Deno.writeTextFile(path, text);
    await fn(path);
  } finally {
    await Deno.remove(path);
  }
}

Deno.test("cloud config: none given is nothing to read", () => {
  assert.equal(readCloudConfig("aks", null), null);
  assert.equal(readCloudConfig("aks", ""), null);
});

Deno.test("cloud config: Azure's JSON file is parsed and its load-balancer fields validated", async () => {
  const good = {
    cloud: "AzurePublicCloud",
    resourceGroup: "MC_rg-shop_aks-shop_westeurope",
    location: "westeurope",
    loadBalancerSku: "Standard",
    aadClientSecret: "not logged",
  };
  await withFile(JSON.stringify(good), (path) => {
    for (const provider of ["azure", "aks", "acs"]) {
      const info = readCloudConfig(provider, path)!;
      assert.equal(info.format, "azure-json");
      assert.deepEqual(info.fields, {
        resourceGroup: "MC_rg-shop_aks-shop_westeurope",
        location: "westeurope",
        loadBalancerSku: "standard",
      });
    }
  });
  await withFile(JSON.stringify({ ...good, loadBalancerSku: "premium" }), (path) => {
    assert.throws(
      () => readCloudConfig("aks", path),
      (e: unknown) => e instanceof SetupError && /--cloud-config/.test(e.message) && /loadBalancerSku/.test(e.message),
    );
  });
  await withFile(JSON.stringify({ ...good, resourceGroup: "rg with spaces" }), (path) => {
    assert.throws(() => readCloudConfig("azure", path), /resourceGroup/);
  });
  await withFile("[Global]\nzone = x\n", (path) => {
    assert.throws(
      () => readCloudConfig("aks", path),
      (e: unknown) => e instanceof SetupError && /not JSON/.test(e.message) && !e.message.includes("\n"),
    );
  });
  await withFile("[1, 2]", (path) => assert.throws(() => readCloudConfig("aks", path), /not a JSON object/));
});

Deno.test("cloud config: other providers' files are read, not interpreted", async () => {
  await withFile("[Global]\nauth-url = https://keystone.example:5000/v3\n", (path) => {
    const info = readCloudConfig("openstack", path)!;
    assert.equal(info.format, "opaque");
    assert.deepEqual(info.fields, {});
    assert.equal(info.provider, "openstack");
    assert.equal(readCloudConfig(null, path)!.provider, null);
  });
  assert.throws(
    () => readCloudConfig("gce", "/nonexistent/gce.conf"),
    (e: unknown) => e instanceof SetupError && /--cloud-config "\/nonexistent\/gce.conf": cannot read/.test(e.message),
  );
});

Deno.test("FQDN env: aks/acs with the option get the API server's FQDN host and port", () => {
  const fqdn = new URL("https://aks-shop-dns-1a2b3c.hcp.westeurope.azmk8s.io:443");
  for (const provider of ["aks", "acs"]) {
    assert.deepEqual(apiServerEnv(provider, true, fqdn), {
      env: [
        { name: "KUBERNETES_SERVICE_HOST", value: "aks-shop-dns-1a2b3c.hcp.westeurope.azmk8s.io" },
        { name: "KUBERNETES_SERVICE_PORT", value: "443" },
      ],
    });
  }
  assert.deepEqual(apiServerEnv("aks", true, new URL("https://api.example.com:6443")).env.map((e) => e.value), [
    "api.example.com",
    "6443",
  ]);
  assert.deepEqual(apiServerEnv("aks", true, new URL("http://api.example.com")).env[1].value, "80");
});

Deno.test("FQDN env: nothing when the option is off, on other providers, or without an FQDN", () => {
  const fqdn = new URL("https://aks-shop.hcp.westeurope.azmk8s.io:443");
  assert.deepEqual(apiServerEnv("aks", false, fqdn), { env: [] });
  for (const p of [null, "azure", "aws", "gke", "baremetal"]) {
    assert.deepEqual(apiServerEnv(p, true, fqdn), { env: [] });
  }
  for (const u of ["https://10.0.0.1:443", "https://[fd00::1]:443", "https://localhost:6443"]) {
    const r = apiServerEnv("aks", true, new URL(u));
    assert.deepEqual(r.env, [], u);
    assert.match(r.skipped!, /names no FQDN/, u);
  }
});

Deno.test("settings: the cloud and metrics options from each release", () => {
  const a = settingsFromConfig(
    parseRunFlags("A", [
      "--cloud-provider=aks",
      "--metrics-crd-apigroup=metrics.example.com",
      "--metrics-crd-kinds=servicemonitor=Scraper:scrapers",
    ]),
  );
  assert.equal(a.cloudProvider, "aks");
  assert.equal(a.cloudConfig, null);
  assert.equal(a.useApiserverFqdnForManagedCluster, true);
  assert.equal(a.metricsCrdApiGroup, "metrics.example.com");
  assert.equal(a.metricsCrdKinds, "servicemonitor=Scraper:scrapers");
  const off = settingsFromConfig(parseRunFlags("A", ["--use-apiserver-fqdn-for-managed-cluster=false"]));
  assert.equal(off.useApiserverFqdnForManagedCluster, false);
  const c = settingsFromConfig(parseRunFlags("C", ["--cloud-provider="]));
  assert.equal(c.cloudProvider, null);
  assert.equal(c.useApiserverFqdnForManagedCluster, false, "releases without the option keep the API server address");
  assert.equal(c.metricsCrdApiGroup, "monitoring.coreos.com");
  assert.equal(c.metricsCrdKinds, null);
});
