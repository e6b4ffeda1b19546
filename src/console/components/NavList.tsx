/** A site's main navigation: one link per section, the current one marked for screen readers and styles. */
export function NavList({
  label,
  items,
  current,
}: {
  label: string;
  items: readonly { href: string; text: string }[];
  current?: string | undefined;
}) {
  return (
    <nav aria-label={label}>
      <ul>
        {items.map((item) => (
          <li>
            <a href={item.href} aria-current={item.text === current ? 'page' : undefined}>
              {item.text}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
