/** A link as it may be shown or stored: without what makes it a credential. */
export interface BareLink {
  /** The link without its query string, fragment or user:password. */
  url: string;
  /** Whether something was taken off (a signed storage link carries its signature in the query). */
  signed: boolean;
}

// A signed URL's query (X-Amz-Signature, sig=, token=), a path parameter (;sig=), a user:password or a
// fragment is a credential. What is left names the file without granting access to it.
export function bareLink(link: string): BareLink {
  let u: URL;
  try {
    u = new URL(link);
  } catch {
    // Not a URL: cut at the first ?, # or ; all the same.
    const cut = link.search(/[?#;]/);
    return cut < 0 ? { url: link, signed: false } : { url: link.slice(0, cut), signed: true };
  }
  const params = u.pathname.indexOf(';');
  const signed =
    u.search !== '' ||
    u.hash !== '' ||
    u.username !== '' ||
    u.password !== '' ||
    params >= 0 ||
    link.includes('?');
  u.search = '';
  u.hash = '';
  u.username = '';
  u.password = '';
  if (params >= 0) u.pathname = u.pathname.slice(0, params);
  return { url: u.href, signed };
}

/** Whether a value looks like a link (http, https): a free-form record's fields are checked with it. */
export const isLink = (v: unknown): v is string => typeof v === 'string' && /^https?:\/\//i.test(v.trim());

// Any scheme (ftp:, s3:, a storage service's own, mailto:), or none (//host/path, a network-path
// reference): a credential in its query is one all the same.
const ANY_URL =
  /\b(?:[a-z][a-z0-9+.-]*:\/\/|mailto:)[^\s"'<>]+|(?<![\w:/])\/\/[a-z0-9-]+(?:\.[a-z0-9-]+)+[^\s"'<>]*/gi;

/** A free text with every URL in it (any scheme) bare; whether something was taken off. */
export function bareLinksIn(text: string): BareLink {
  let signed = false;
  const url = text.replace(ANY_URL, (found) => {
    const b = bareLink(found);
    signed ||= b.signed;
    return b.url;
  });
  return { url, signed };
}
