/**
 * The demo's forty customers: people at software companies, small and large, a few in the EU (billed in
 * EUR), and one whose name has the quotes and ampersand that break careless escaping.
 */
export interface DemoPerson {
  name: string;
  company: string | null;
  tier: 'starter' | 'professional' | 'enterprise';
  city: string;
  /** Billed in EUR on the EUR plan. */
  eu?: boolean;
}

export const PEOPLE: readonly DemoPerson[] = [
  { name: 'Ada Whitfield', company: 'Lumen Analytics', tier: 'enterprise', city: 'Boston, MA' },
  { name: 'Marcus Oyelaran', company: 'Brightpath Logistics', tier: 'professional', city: 'Atlanta, GA' },
  { name: 'Priya Raman', company: 'Kestrel Health', tier: 'enterprise', city: 'San Jose, CA' },
  { name: 'Tomás Herrera', company: 'Cobalt Studio', tier: 'starter', city: 'Austin, TX' },
  {
    name: 'Hannah Becker',
    company: 'Nordlicht Software GmbH',
    tier: 'professional',
    city: 'Hamburg, Germany',
    eu: true,
  },
  {
    name: "Declan O'Brien",
    company: 'O\'Brien & Daughters "Fine Software" Ltd.',
    tier: 'professional',
    city: 'Cork, Ireland',
    eu: true,
  },
  { name: 'Mei Lin Chou', company: 'Paperkite Labs', tier: 'starter', city: 'Seattle, WA' },
  { name: 'Jonas Lindqvist', company: 'Fjord Systems AB', tier: 'professional', city: 'Gothenburg, Sweden', eu: true },
  { name: 'Amara Nwosu', company: 'Harbor & Pine Creative', tier: 'starter', city: 'Portland, OR' },
  { name: 'Samuel Greene', company: 'Greene Accounting', tier: 'starter', city: 'Columbus, OH' },
  { name: 'Isabela Costa', company: 'Veranda Media', tier: 'professional', city: 'Miami, FL' },
  { name: 'Kenji Watanabe', company: 'Tessellate Robotics', tier: 'enterprise', city: 'San Francisco, CA' },
  { name: 'Olivia Martin', company: null, tier: 'starter', city: 'Denver, CO' },
  { name: 'Rafael Moreau', company: 'Atelier Moreau SARL', tier: 'starter', city: 'Lyon, France', eu: true },
  { name: 'Grace Adeyemi', company: 'Northwind Traders', tier: 'enterprise', city: 'Chicago, IL' },
  { name: 'Liam Fitzgerald', company: 'Quillbyte', tier: 'professional', city: 'New York, NY' },
  { name: 'Sofia Petrova', company: 'Orbital Freight', tier: 'professional', city: 'Houston, TX' },
  { name: 'Noah Kim', company: 'Maple Leaf Dental Group', tier: 'starter', city: 'Minneapolis, MN' },
  { name: 'Elena Rossi', company: 'Solare Energy', tier: 'enterprise', city: 'Phoenix, AZ' },
  { name: 'Daniel Abramov', company: 'Inkwell Publishing', tier: 'professional', city: 'Philadelphia, PA' },
  { name: 'Chloé Dubois', company: null, tier: 'starter', city: 'Montreal, QC' },
  { name: 'Wei Zhang', company: 'Jade Circuit Design', tier: 'professional', city: 'Irvine, CA' },
  { name: 'Fatima Al-Sayed', company: 'Oasis Property Management', tier: 'starter', city: 'Dallas, TX' },
  { name: 'George Papadopoulos', company: 'Aegean Charter Co.', tier: 'starter', city: 'Tampa, FL' },
  { name: 'Zoe Thompson', company: 'Thompson & Reyes LLP', tier: 'professional', city: 'Washington, DC' },
  { name: 'Arjun Mehta', company: 'Saffron Cloud', tier: 'enterprise', city: 'Raleigh, NC' },
  { name: 'Ingrid Halvorsen', company: 'Polar Data', tier: 'professional', city: 'Salt Lake City, UT' },
  { name: 'Carlos Mendoza', company: 'Mendoza Construction', tier: 'starter', city: 'San Antonio, TX' },
  { name: 'Yuki Tanaka', company: 'Bento Games', tier: 'starter', city: 'Los Angeles, CA' },
  { name: 'Benjamin Osei', company: 'Clearwater Schools', tier: 'professional', city: 'Nashville, TN' },
  { name: 'Lucía Fernández', company: 'Mirador Travel', tier: 'starter', city: 'San Diego, CA' },
  { name: 'Ethan Brooks', company: 'Brooks Family Farms', tier: 'starter', city: 'Omaha, NE' },
  { name: 'Nadia Haddad', company: 'Cedar Point Clinics', tier: 'enterprise', city: 'Detroit, MI' },
  { name: 'Oscar Nilsson', company: 'Lingonberry Apps', tier: 'starter', city: 'Brooklyn, NY' },
  { name: 'Aisha Bello', company: 'Sahel Microfinance', tier: 'professional', city: 'Baltimore, MD' },
  { name: 'Victor Lambert', company: 'Lambert Architecture', tier: 'professional', city: 'Pittsburgh, PA' },
  { name: 'Hana Novak', company: 'Vltava Digital s.r.o.', tier: 'starter', city: 'Prague, Czechia', eu: true },
  { name: 'Patrick Sullivan', company: 'Shamrock Security', tier: 'professional', city: 'Providence, RI' },
  { name: 'Leila Farahani', company: 'Persimmon Bakery', tier: 'starter', city: 'Sacramento, CA' },
  { name: 'Theo van Dijk', company: 'Tulip Ventures', tier: 'enterprise', city: 'Jersey City, NJ' },
];

/** A plain address for the person's email: letters and digits of the name, dots between the words. */
export function emailOf(person: DemoPerson, index: number): string {
  const local = person.name
    .normalize('NFD')
    .replace(/[^A-Za-z ]/g, '')
    .toLowerCase()
    .trim()
    .split(/\s+/)
    .join('.');
  const domain = (person.company ?? `home-${index + 1}`)
    .normalize('NFD')
    .replace(/[^A-Za-z0-9 ]/g, '')
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => !['gmbh', 'ltd', 'ab', 'sarl', 'llp', 'co', 'sro'].includes(w))
    .slice(0, 2)
    .join('');
  return `${local}@${domain}.example`;
}
