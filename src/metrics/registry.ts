import { collectDefaultMetrics, Registry } from 'prom-client';

const registries = new WeakMap<object, Registry>();

/**
 * The metrics registry of one running Wharf, keyed by its services object so that servers
 * sharing a process (the tests) keep their counts apart, with prom-client's default
 * process and Node.js metrics (CPU, memory, event-loop lag, GC, handles).
 */
export function metricsRegistry(owner: object): Registry {
  let registry = registries.get(owner);
  if (!registry) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
    registries.set(owner, registry);
  }
  return registry;
}

/** One metric family per registry: made by `make` the first time `owner`'s registry asks for `name`. */
export function familyOf<T>(owner: object, name: string, make: (registry: Registry) => T): T {
  const registry = metricsRegistry(owner);
  let byName = families.get(registry);
  if (!byName) families.set(registry, (byName = new Map()));
  if (!byName.has(name)) byName.set(name, make(registry));
  return byName.get(name) as T;
}

const families = new WeakMap<Registry, Map<string, unknown>>();
