/**
 * An email's two parts from one content (M-3): the HTML part rendered with preact-render-to-string (as the console's
 * pages) and its stylesheet inlined with juice, since mail clients drop <style> blocks; the text part written from
 * the same content. Every value is escaped by preact.
 */
import { readFileSync } from 'node:fs';
import juice from 'juice';
import { render } from 'preact-render-to-string';
import type { Company, MessageContent } from './messages.ts';

const STYLE = readFileSync(new URL('./assets/email.css', import.meta.url), 'utf8');

function EmailHtml({ content, company }: { content: MessageContent; company: Company }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{content.subject}</title>
        <style>{STYLE}</style>
      </head>
      <body>
        <div class="wrap">
          <div class="card">
            <p class="company">{company.name}</p>
            <h1>{content.heading}</h1>
            {content.paragraphs.map((p) => (
              <p key={p}>{p}</p>
            ))}
            <table>
              <tbody>
                {content.facts.map(([label, value]) => (
                  <tr key={label}>
                    <th>{label}</th>
                    <td>{value}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {content.action && (
              <p>
                <a class="button" href={content.action.url}>
                  {content.action.label}
                </a>
              </p>
            )}
          </div>
          <p class="footer">
            {company.name}
            {company.address && <br />}
            {company.address}
            {company.email && <br />}
            {company.email && <>Questions? Write to {company.email}</>}
          </p>
        </div>
      </body>
    </html>
  );
}

export function renderEmailHtml(content: MessageContent, company: Company): string {
  return juice(`<!doctype html>${render(<EmailHtml content={content} company={company} />)}`);
}

export function renderEmailText(content: MessageContent, company: Company): string {
  const width = Math.max(0, ...content.facts.map(([label]) => label.length));
  const lines = [
    content.heading,
    '',
    ...content.paragraphs.flatMap((p) => [p, '']),
    ...content.facts.map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${value}`),
  ];
  if (content.action) lines.push('', `${content.action.label}: ${content.action.url}`);
  lines.push('', '--', company.name);
  if (company.address) lines.push(company.address);
  if (company.email) lines.push(`Questions? Write to ${company.email}`);
  return `${lines.join('\n')}\n`;
}
