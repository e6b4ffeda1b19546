export const customerRoutes = [];
