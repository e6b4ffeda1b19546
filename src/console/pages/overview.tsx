// NOTE TO THE ENGINEER: the common rules for this task (worktree, style, tests, what to report) are in /work/console-rules.md: read them first. Remove this line.
import { Layout } from '../components/Layout.tsx';
import { definePage } from '../http/route.ts';

/** `/admin` (console.md, money table): the revenue overview. */
export const overviewPage = definePage({
  path: '/admin',
  async render({ viewer, notice }) {
    return (
      <Layout title="Overview" viewer={viewer} section="Overview" notice={notice}>
        <h1>Overview</h1>
      </Layout>
    );
  },
});

export const overviewRoutes = [overviewPage];
