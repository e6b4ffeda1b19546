export const v1Routes = [];
