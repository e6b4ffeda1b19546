/**
 * `/docs` (D-94): the OpenAPI document rendered by Swagger UI, a maintained renderer served from
 * `node_modules` (no CDN: the service may run without internet). Fields, types, examples and each
 * operation's error codes all come from `/api/openapi.json`, so the page cannot say less than the document.
 */
export function renderDocsPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Billing service API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<noscript><p>This reference needs JavaScript. The same content, as JSON:
<a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1).</p></noscript>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/docs.js"></script>
</body>
</html>
`;
}
