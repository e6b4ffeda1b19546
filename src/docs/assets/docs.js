// /docs: Swagger UI (swagger-ui-dist, served from node_modules) over this service's OpenAPI document.
// A file of its own because the page's Content-Security-Policy allows no inline script.
window.addEventListener('load', () => {
  window.ui = window.SwaggerUIBundle({
    url: '/api/openapi.json',
    dom_id: '#reference',
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    defaultModelExpandDepth: 3,
    displayRequestDuration: true,
    filter: true,
    showExtensions: true,
    tryItOutEnabled: false,
    // Requests go to this origin with the browser's session cookie: log in at /admin first to try admin routes.
    withCredentials: true,
  });
});
