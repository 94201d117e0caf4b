import type { SUPPORTED_LANGUAGES } from "../../../../domain/settings/language.js";

export type Language = (typeof SUPPORTED_LANGUAGES)[number];

/**
 * Every text of the login pages; each language file has every key (the type checks it).
 * One register per language, the same in the message texts (src/engines/notifications/texts):
 * Sie, vous, usted, Lei, você, u; Polish imperative with the capitalised Ty forms;
 * Japanese です/ます; Chinese 您 (test/oidc/login-texts.test.ts keeps it so).
 */
export interface Texts {
  signInTitle: string;
  loginName: string;
  password: string;
  next: string;
  signIn: string;
  otherAccount: string;
  unknownUser: string;
  wrongPassword: string;
  userLocked: string;
  formExpired: string;
  loginExpired: string;
  errorTitle: string;
  tooManyAttempts: string;
  signOutTitle: string;
  signOutQuestion: string;
  signOut: string;
  signedOut: string;
  changePasswordTitle: string;
  newPassword: string;
  confirmPassword: string;
  changePassword: string;
  passwordsDiffer: string;
  passwordPolicy: string;
  selectAccountTitle: string;
  selectAccountEmpty: string;
  registerTitle: string;
  registerLink: string;
  registerButton: string;
  givenName: string;
  familyName: string;
  email: string;
  username: string;
  registerNotAllowed: string;
  registerInvalidName: string;
  registerInvalidEmail: string;
  registerInvalidUsername: string;
  registerUsernameTaken: string;
  passwordLoginDisabled: string;
  externalSignInWith: string;
  externalAccountTitle: string;
  externalNotLinked: string;
  externalNoAccount: string;
  externalLinkTitle: string;
  externalLinkProposal: string;
  externalLinkManual: string;
  externalLinkExisting: string;
  externalLink: string;
  externalCreateTitle: string;
  externalCreateNew: string;
  externalCreate: string;
  externalUsername: string;
  externalGivenName: string;
  externalFamilyName: string;
  externalEmail: string;
  externalFieldsRequired: string;
  externalUsernameTaken: string;
  externalAlreadyLinked: string;
  externalFailed: string;
  externalUnreachable: string;
  /** LDAP: an unknown login name and a wrong password alike, so neither tells which names exist. */
  externalLdapRefused: string;
  externalCancelled: string;
  /** The external login's callback reached a browser that did not start it. */
  externalOtherBrowser: string;
  externalBack: string;
  /** The page a verify_email message's link opens (verify-email.ts). */
  verifyEmailTitle: string;
  verifyEmailIntro: string;
  code: string;
  verify: string;
  emailVerified: string;
  codeInvalid: string;
  forgotPassword: string;
  forgotPasswordIntro: string;
  sendCode: string;
  resetCodeSent: string;
  resetPasswordTitle: string;
  resetPasswordIntro: string;
  acceptInviteTitle: string;
  acceptInviteIntro: string;
  setPassword: string;
  passwordSet: string;
  /** The link onward once a password is set, where the invitation leads (the console). */
  continueOnward: string;
  mfaTitle: string;
  mfaTotpIntro: string;
  mfaEmailIntro: string;
  mfaSmsIntro: string;
  mfaRecoveryIntro: string;
  mfaOtherWays: string;
  factorTotp: string;
  factorOtpEmail: string;
  factorOtpSms: string;
  factorRecoveryCode: string;
  sendNewCode: string;
  codeNotSent: string;
  mfaSetupTitle: string;
  mfaSetupIntro: string;
  mfaSetupImpossible: string;
  totpSetupIntro: string;
  totpQrLabel: string;
  totpKey: string;
  skipForNow: string;
  /** The first page's button: a passkey signs in without a login name (passkey-sign-in.ts). */
  signInWithPasskey: string;
  factorPasskey: string;
  factorSecurityKey: string;
  mfaPasskeyIntro: string;
  mfaSecurityKeyIntro: string;
  /** Shown by the WebAuthn script when the browser's ceremony fails or is cancelled. */
  webauthnFailed: string;
  /** Where a page is about a passkey or security key and no script or WebAuthn runs. */
  webauthnNeedsScript: string;
  webauthnInvalid: string;
  passkeyNotAllowed: string;
  /** The offer of a passkey after a password sign-in (key-setup.ts). */
  passkeyOfferTitle: string;
  passkeyOfferIntro: string;
  setUpPasskey: string;
  setUpSecurityKey: string;
  notNow: string;
  passkeyCreateIntro: string;
  securityKeyCreateIntro: string;
  webauthnRegistrationFailed: string;
  chooseAnotherWay: string;
  /** Under every page's heading within an interaction: the application the person signs in to ({app}). */
  appContext: string;
  /** The watermark under the card ({name}: the product), unless the branding disables it. */
  securedBy: string;
  /** The divider before other ways to sign in (identity providers, a passkey). */
  or: string;
  /** Under "Skip for now" ({when}: "in 7 days", in the page's language). */
  skipNote: string;
  /** On the second factor's step when a key is the person's only way and the browser cannot use one. */
  mfaOnlyKey: string;
  /** A new password's rules: under its field before anything is typed, and after `passwordPolicy` when it breaks them ({rules}: the rules as a list). */
  passwordHint: string;
  passwordNeeds: string;
  ruleMinLength: string;
  ruleUppercase: string;
  ruleLowercase: string;
  ruleNumber: string;
  ruleSymbol: string;
  /** The second password field of registration (not a "new" password there). */
  repeatPassword: string;
  /** Errors the provider shows instead of going back to the application (provider-pages.ts): a sentence for people, the technical words below for its developer. */
  errorUnknownApp: string;
  errorReturnAddress: string;
  errorBadRequest: string;
  errorWhatNow: string;
  errorForDevelopers: string;
}
