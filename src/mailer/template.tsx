/**
 * An email's two parts from one content (M-3): the HTML part rendered with preact-render-to-string (as the console's
 * pages) with its stylesheet inlined, since mail clients drop <style> blocks; the text part written from the same
 * content. Every value is escaped by preact.
 *
 * The inlining is juice's, done once per process: juice inlines the stylesheet into a probe of every styled element
 * of the layout, and each email's elements take the style their probe got. Juicing each email instead (parsing its
 * whole HTML) cost 8.8 ms an email on the bench machine, more than the SMTP send, and held the worker to a third of
 * nodemailer's own rate (bench/emails.ts).
 */
import { readFileSync } from 'node:fs';
import juice from 'juice';
import { render } from 'preact-render-to-string';
import type { Company, MessageContent } from './messages.ts';

const STYLESHEET = readFileSync(new URL('./assets/email.css', import.meta.url), 'utf8');

/** Every styled element of the layout, by the name the components use. */
const PROBE = {
  body: '<body data-probe="body">',
  wrap: '<div class="wrap" data-probe="wrap">',
  card: '<div class="card" data-probe="card">',
  company: '<p class="company" data-probe="company">',
  h1: '<h1 data-probe="h1">',
  p: '<p data-probe="p">',
  table: '<table data-probe="table">',
  tr: '<tr data-probe="tr">',
  th: '<th data-probe="th">',
  td: '<td data-probe="td">',
  button: '<a class="button" data-probe="button">',
  footer: '<p class="footer" data-probe="footer">',
} as const;

type Styled = keyof typeof PROBE;

/** Each probe's inline style as juice wrote it. */
function inlineStyles(): Record<Styled, string> {
  const html = juice(`<html><head><style>${STYLESHEET}</style></head>${Object.values(PROBE).join('')}</html>`);
  const styles = {} as Record<Styled, string>;
  for (const [, attributes] of html.matchAll(/<\w+([^>]*data-probe="\w+"[^>]*)>/g)) {
    const name = /data-probe="(\w+)"/.exec(attributes!)![1] as Styled;
    styles[name] = /style="([^"]*)"/.exec(attributes!)?.[1]?.replace(/&quot;/g, '"') ?? '';
  }
  return styles;
}

const S = inlineStyles();

function EmailHtml({ content, company }: { content: MessageContent; company: Company }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{content.subject}</title>
      </head>
      <body style={S.body}>
        <div style={S.wrap}>
          <div style={S.card}>
            <p style={S.company}>{company.name}</p>
            <h1 style={S.h1}>{content.heading}</h1>
            {content.paragraphs.map((p) => (
              <p key={p} style={S.p}>
                {p}
              </p>
            ))}
            <table style={S.table}>
              <tbody>
                {content.facts.map(([label, value]) => (
                  <tr key={label} style={S.tr}>
                    <th style={S.th}>{label}</th>
                    <td style={S.td}>{value}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {content.action && (
              <p style={S.p}>
                <a style={S.button} href={content.action.url}>
                  {content.action.label}
                </a>
              </p>
            )}
          </div>
          <p style={S.footer}>
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
  return `<!doctype html>${render(<EmailHtml content={content} company={company} />)}`;
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
