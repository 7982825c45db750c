/** A link as it may be shown or stored: without what makes it a credential. */
export interface BareLink {
  /** The link without its query string, fragment or user:password. */
  url: string;
  /** Whether something was taken off (a signed storage link carries its signature in the query). */
  signed: boolean;
}

// A signed URL's query (X-Amz-Signature, sig=, token=) is a credential; so is a user:password or a fragment
// token. What is left names the file without granting access to it.
export function bareLink(link: string): BareLink {
  let u: URL;
  try {
    u = new URL(link);
  } catch {
    // Not a URL: cut at the first ? or # all the same.
    const cut = link.search(/[?#]/);
    return cut < 0 ? { url: link, signed: false } : { url: link.slice(0, cut), signed: true };
  }
  const signed =
    u.search !== '' || u.hash !== '' || u.username !== '' || u.password !== '' || link.includes('?');
  u.search = '';
  u.hash = '';
  u.username = '';
  u.password = '';
  return { url: u.href, signed };
}

/** Whether a value looks like a link (http, https): a free-form record's fields are checked with it. */
export const isLink = (v: unknown): v is string => typeof v === 'string' && /^https?:\/\//i.test(v.trim());
