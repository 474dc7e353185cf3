// The managed policy (issue 34, item 2): rules and switches an organisation fixed in a file on the
// host that no one on the dashboard can change. Read once per page load: the file changes only
// with a restart of the host.

import { useEffect, useState } from "react";
import { request } from "./api";
import type { Schemas, Sent } from "./types";

export type ManagedPolicy = Sent<Schemas["ManagedPolicyView"]>;

let loaded: Promise<ManagedPolicy | null> | null = null;

/** GET /api/policy/managed once; null when it cannot be read (then nothing is shown as locked,
 * and the server still refuses whatever the policy forbids). */
export function managedPolicy(): Promise<ManagedPolicy | null> {
  loaded ??= request<ManagedPolicy>("GET", "/api/policy/managed").catch(() => {
    loaded = null; // try again next time: signed out, or the host restarting
    return null;
  });
  return loaded;
}

/** The managed policy, or null until it is read (or when there is none). */
export function useManagedPolicy(): ManagedPolicy | null {
  const [policy, setPolicy] = useState<ManagedPolicy | null>(null);
  useEffect(() => {
    let cancelled = false;
    void managedPolicy().then((found) => !cancelled && setPolicy(found && found.active ? found : null));
    return () => {
      cancelled = true;
    };
  }, []);
  return policy;
}

/** Whether the managed policy turns "always allow" off (the card then does not offer it). */
export function alwaysAllowOff(policy: ManagedPolicy | null): boolean {
  return Boolean(policy?.disable_allow_always);
}
