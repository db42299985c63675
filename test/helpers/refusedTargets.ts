/** Every private or special address form the service must refuse, written the ways an attacker would. */
export const REFUSED_HOSTS: Array<[string, string]> = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['[::1]', 'loopback IPv6'],
  ['10.0.0.1', 'RFC 1918 10/8'],
  ['172.16.0.1', 'RFC 1918 172.16/12'],
  ['172.31.255.255', 'RFC 1918 172.16/12'],
  ['192.168.0.1', 'RFC 1918 192.168/16'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['169.254.1.1', 'link-local'],
  ['100.64.0.1', 'CGNAT'],
  ['100.127.255.254', 'CGNAT'],
  ['[fc00::1]', 'unique-local IPv6'],
  ['[fd12:3456::1]', 'unique-local IPv6'],
  ['[fd00:ec2::254]', 'unique-local IPv6 (AWS metadata)'],
  ['[fe80::1]', 'link-local IPv6'],
  ['[::ffff:127.0.0.1]', 'IPv4-mapped loopback'],
  ['[::ffff:10.0.0.1]', 'IPv4-mapped private'],
  ['[::ffff:169.254.169.254]', 'IPv4-mapped metadata'],
  ['[::ffff:7f00:1]', 'IPv4-mapped loopback, hex'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['[ff02::1]', 'multicast IPv6'],
  ['0.0.0.0', 'unspecified'],
  ['0', 'unspecified, short'],
  ['[::]', 'unspecified IPv6'],
  ['255.255.255.255', 'broadcast'],
  ['2130706433', 'decimal 127.0.0.1'],
  ['3232235521', 'decimal 192.168.0.1'],
  ['2852039166', 'decimal 169.254.169.254'],
  ['0177.0.0.1', 'octal 127.0.0.1'],
  ['017700000001', 'octal 127.0.0.1, one number'],
  ['0251.0376.0251.0376', 'octal 169.254.169.254'],
  ['0x7f000001', 'hex 127.0.0.1'],
  ['0x7f.0.0.1', 'hex 127.0.0.1, dotted'],
  ['0xA9FEA9FE', 'hex 169.254.169.254'],
  ['127.1', 'short 127.0.0.1'],
  ['10.1', 'short 10.0.0.1'],
  ['[64:ff9b::7f00:1]', 'NAT64 of 127.0.0.1'],
  ['[2002:7f00:1::1]', '6to4 of 127.0.0.1'],
  // issue 10: IPv4-compatible (deprecated ::/96) and the other IPv4-embedding forms
  ['[::127.0.0.1]', 'IPv4-compatible 127.0.0.1'],
  ['[::7f00:1]', 'IPv4-compatible 127.0.0.1, hex'],
  ['[::a00:1]', 'IPv4-compatible 10.0.0.1'],
  ['[::a9fe:a9fe]', 'IPv4-compatible 169.254.169.254'],
  ['[::8.8.8.8]', 'IPv4-compatible of a public address (deprecated form)'],
  ['[::ffff:0:7f00:1]', 'IPv4-translated 127.0.0.1'],
  ['[64:ff9b::10.0.0.1]', 'NAT64 of 10.0.0.1'],
  ['[64:ff9b::a9fe:a9fe]', 'NAT64 of 169.254.169.254'],
  ['[64:ff9b:1::7f00:1]', 'local-use NAT64 (64:ff9b:1::/48)'],
  ['[64:ff9b:1:a00:1::]', 'local-use NAT64, /48 embedding'],
  ['[2002:a00:1::1]', '6to4 of 10.0.0.1'],
  ['[2002:a9fe:a9fe::1]', '6to4 of 169.254.169.254'],
  ['[2001:0:4136:e378:8000:63bf:80ff:fffe]', 'Teredo client 127.0.0.1'],
  ['[2001:0:4136:e378:8000:63bf:f5ff:fffe]', 'Teredo client 10.0.0.1'],
  ['[2001:0:7f00:1:8000:63bf:a2b4:21dd]', 'Teredo server 127.0.0.1'],
];

/** The IPv6 forms that embed an IPv4 address `v4` (issue 10, item 7): [label, address without brackets]. */
export function embeddingForms(v4: string): Array<[string, string]> {
  const b = v4.split('.').map(Number);
  const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
  const h1 = hex(b[0], b[1]);
  const h2 = hex(b[2], b[3]);
  // Teredo: the client's address XOR-ed with 0xffffffff in the last 32 bits, the server's in bits 32-63
  const x1 = hex(b[0] ^ 0xff, b[1] ^ 0xff);
  const x2 = hex(b[2] ^ 0xff, b[3] ^ 0xff);
  return [
    ['ipv4Compatible', `::${v4}`],
    ['ipv4Compatible', `::${h1}:${h2}`],
    ['ipv4Compatible', `0:0:0:0:0:0:${h1}:${h2}`],
    ['ipv4Mapped', `::ffff:${h1}:${h2}`],
    ['ipv4Translated', `::ffff:0:${h1}:${h2}`],
    ['nat64', `64:ff9b::${v4}`],
    ['nat64', `64:ff9b::${h1}:${h2}`],
    ['nat64LocalUse', `64:ff9b:1::${h1}:${h2}`],
    ['6to4', `2002:${h1}:${h2}::1`],
    ['6to4', `2002:${h1}:${h2}:ffff::${h1}:${h2}`],
    // a public server (65.54.227.120) with this client; this server with a public client (93.75.222.34)
    ['teredoClient', `2001:0:4136:e378:8000:63bf:${x1}:${x2}`],
    ['teredoServer', `2001:0:${h1}:${h2}:8000:63bf:a2b4:21dd`],
  ];
}

/** The forms refused whatever address they embed: deprecated, or not globally routable. */
export const ALWAYS_REFUSED_FORMS = ['ipv4Compatible', 'ipv4Translated', 'nat64LocalUse'];
