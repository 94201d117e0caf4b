import type { SUPPORTED_LANGUAGES } from "../../../domain/settings/language.js";

export type Language = (typeof SUPPORTED_LANGUAGES)[number];

/** Every text of the login pages; each language file has every key (the type checks it). */
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
  currentPassword: string;
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
}
