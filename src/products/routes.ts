export const productRoutes = [];
