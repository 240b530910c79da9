/**
 * Which addresses a job may make the runner connect to. A job's definition names URLs
 * (http-poll), and whoever may edit a job must not reach what only the runner's host can
 * reach: the metadata server hands out the host's credentials, and loopback and private
 * ranges hold emulators and internal services. Link-local and metadata addresses are
 * never allowed; loopback and private ranges only when the deployment lists them in
 * `SLUICE_EGRESS_ALLOW` (CIDRs). The guard that applies this at connect time is
 * `guarded-fetch.ts`.
 *
 * @example
 *   const policy = new EgressPolicy(['127.0.0.0/8']);
 *   policy.refusal('169.254.169.254'); // 'link-local address (cloud metadata server)'
 */
import { BlockList, isIP } from 'node:net';

/** What the local stack and `sluice job run` / `sluice worker run` allow when nothing is configured. */
export const LOCAL_EGRESS_ALLOW: readonly string[] = ['127.0.0.0/8', '::1/128'];

/** Host names of metadata servers, refused before any lookup (their address may not resolve off-cloud). */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata', 'metadata.goog']);

type Rule = { cidr: string; reason: string };

/** Never allowed, whatever the allow list says. */
const ALWAYS_REFUSED: Rule[] = [
  { cidr: '169.254.0.0/16', reason: 'link-local address (cloud metadata server)' },
  { cidr: '100.100.100.200/32', reason: 'cloud metadata server' },
  { cidr: '0.0.0.0/8', reason: 'unspecified address (reaches the host itself)' },
  { cidr: '224.0.0.0/4', reason: 'multicast address' },
  { cidr: '240.0.0.0/4', reason: 'reserved address' },
  { cidr: 'fd00:ec2::254/128', reason: 'cloud metadata server' },
  { cidr: 'fe80::/10', reason: 'link-local address' },
  { cidr: '::/128', reason: 'unspecified address (reaches the host itself)' },
  { cidr: 'ff00::/8', reason: 'multicast address' },
];

/** Refused unless the deployment's allow list covers them. */
const PRIVATE: Rule[] = [
  { cidr: '127.0.0.0/8', reason: 'loopback address' },
  { cidr: '10.0.0.0/8', reason: 'private address' },
  { cidr: '172.16.0.0/12', reason: 'private address' },
  { cidr: '192.168.0.0/16', reason: 'private address' },
  { cidr: '100.64.0.0/10', reason: 'shared (carrier-grade NAT) address' },
  { cidr: '192.0.0.0/24', reason: 'reserved address' },
  { cidr: '198.18.0.0/15', reason: 'reserved address' },
  { cidr: '::1/128', reason: 'loopback address' },
  { cidr: 'fc00::/7', reason: 'unique-local (private) address' },
];

export class EgressPolicy {
  private readonly allowed = new BlockList();
  readonly allow: readonly string[];

  /** @param allow CIDRs (`10.0.0.0/8`, `::1/128`) or single addresses; throws on anything else. */
  constructor(allow: readonly string[] = []) {
    this.allow = allow;
    for (const entry of allow) addRule(this.allowed, entry);
  }

  /** Why connecting to `host` (a name, before lookup) is refused, or undefined. */
  refusalForName(host: string): string | undefined {
    const name = host.toLowerCase().replace(/\.$/, '');
    return METADATA_NAMES.has(name) ? 'cloud metadata server' : undefined;
  }

  /** Why connecting to `address` (an IP address) is refused, or undefined when it is allowed. */
  refusal(address: string): string | undefined {
    const ip = normalise(address);
    if (!ip) return 'not an IP address';
    for (const rule of ALWAYS_REFUSED) if (blocks(rule).check(ip.address, ip.family)) return rule.reason;
    if (this.allowed.check(ip.address, ip.family)) return undefined;
    for (const rule of PRIVATE) {
      if (blocks(rule).check(ip.address, ip.family))
        return `${rule.reason}, not in SLUICE_EGRESS_ALLOW (${this.allow.join(', ') || 'empty'})`;
    }
    return undefined;
  }
}

/** Parses `SLUICE_EGRESS_ALLOW`: CIDRs separated by commas or spaces; unset gives `fallback`. */
export function parseEgressAllow(value: string | undefined, fallback: readonly string[]): string[] {
  if (value === undefined) return [...fallback];
  const entries = value.split(/[\s,]+/).filter(Boolean);
  for (const entry of entries) addRule(new BlockList(), entry);
  return entries;
}

/** The policy of a process that runs jobs outside the control plane (`sluice job run`, `sluice worker run`). */
export function egressPolicyFromEnv(env: NodeJS.ProcessEnv = process.env): EgressPolicy {
  return new EgressPolicy(parseEgressAllow(env.SLUICE_EGRESS_ALLOW, LOCAL_EGRESS_ALLOW));
}

const compiled = new WeakMap<Rule, BlockList>();
function blocks(rule: Rule): BlockList {
  let list = compiled.get(rule);
  if (!list) {
    list = new BlockList();
    addRule(list, rule.cidr);
    compiled.set(rule, list);
  }
  return list;
}

function addRule(list: BlockList, entry: string): void {
  const [address = '', prefixText, ...rest] = entry.trim().split('/');
  const family = isIP(address);
  const max = family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!family || rest.length || !Number.isInteger(prefix) || prefix < 0 || prefix > max) {
    throw new Error(`SLUICE_EGRESS_ALLOW: \`${entry}\` is not a CIDR such as 10.0.0.0/8 or fd00::/8`);
  }
  list.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The address as the network sees it: IPv4 embedded in IPv6 (mapped `::ffff:a.b.c.d`,
 * compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`) is checked as the IPv4 address it reaches.
 */
export function normalise(address: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return { address: bare, family: 'ipv4' };
  if (family !== 6) return undefined;
  const words = expandIpv6(bare);
  const embedded = (words[6]! << 16) | words[7]!;
  const v4 = [embedded >>> 24, (embedded >>> 16) & 255, (embedded >>> 8) & 255, embedded & 255].join('.');
  const zeroPrefix = words.slice(0, 5).every((w) => w === 0);
  if (zeroPrefix && words[5] === 0xffff) return { address: v4, family: 'ipv4' };
  if (zeroPrefix && words[5] === 0 && (words[6] !== 0 || words[7]! > 1))
    return { address: v4, family: 'ipv4' };
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0))
    return { address: v4, family: 'ipv4' };
  return { address: bare, family: 'ipv6' };
}

function expandIpv6(address: string): number[] {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((w) => Number.parseInt(w, 16));
}
