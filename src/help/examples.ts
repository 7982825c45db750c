// Examples after each command's `--help`, by command path (after the definition's own); each runs
// against the emulator in test/guarantees/examples.test.ts.
export const HELP_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  'auth login': [
    'imaging auth login --base-url https://api.example.com   # prompts for the token',
    'imaging auth login --with-token < token.txt',
  ],
  'auth status': ['imaging auth status', 'imaging auth status --check --json'],
  'auth logout': ['imaging auth logout --env sandbox'],
  'config list': ['imaging config list'],
  'config get': ['imaging config get base-url --env local   # the value in use, and where it comes from'],
  'config set': ['imaging config set base-url https://sandbox.example.com --env sandbox'],
  'config unset': ['imaging config unset base-url --env sandbox'],
  'config path': ['imaging config path'],
  modalities: ['imaging modalities', 'imaging modalities --format csv'],
  'body-parts': ['imaging body-parts --modality MRI'],
  cpt: ['imaging cpt 73721', 'imaging cpt 73721 --json'],
  icd10: [
    'imaging icd10 "meniscus tear"',
    'imaging icd10 S83.2 --per-page 6',
    'imaging icd10 knee --all --format ndjson',
  ],
  'law-firms search': [
    'imaging law-firms search "o\'brien"',
    'imaging law-firms search partners --all --format csv',
  ],
  'law-firms create': [
    'imaging law-firms create --name "Doe & Roe LLP" --city Austin --state TX --zipcode 78701',
  ],
  'referrals list': [
    'imaging referrals list',
    'imaging referrals list --per-page 10 --page 2',
    'imaging referrals list --param status=pending --json',
  ],
  'referrals get': ['imaging referrals get ID', 'imaging referrals get ID --json'],
  'referrals create': [
    'imaging referrals create --file referral.json   # a payload to start from: README, Referrals',
  ],
  'referrals export': [
    'imaging referrals export -o referrals.csv',
    'imaging referrals export --rows visit -o visits.csv',
    'imaging referrals export --rows procedure --format ndjson | head -3',
  ],
  'webhook verify': ['imaging webhook verify --request delivery.http --secret-file secret.txt'],
  'webhook sign': ['imaging webhook sign --body event.json --secret-file secret.txt'],
  'webhook listen': ['imaging webhook listen --port 4030 --forward-to http://localhost:3000/webhooks'],
  api: [
    'imaging api /modalities',
    'imaging api /referrals/ID/notifications',
    'imaging api PATCH /referrals/ID --input update.json',
  ],
  sso: ['imaging sso', 'imaging sso --open'],
  mock: ['imaging mock --port 0', 'imaging --env local cpt 73721   # in another terminal'],
};
